import { Forbidden, type FilterHook } from '../../core/pack-api.js';

/** `erp.product.create`: the server's number, a free sku, the initial movement, erp.inventory.updated. */
export const productCreate: FilterHook = ({ id, data }, rc, pack) => pack.use('erp.catalog').beforeCreate(rc, id, data);

/** `erp.product.update`: number kept, stock by admins only and as a movement, erp.inventory.updated. */
export const productUpdate: FilterHook = async ({ id, data, previous }, rc, pack) => {
  await pack.use('erp.catalog').beforeUpdate(rc, id, data, previous!);
};

/** `erp.order.create|update|delete`: orders are written only through /erp/orders (which does not pass here). */
export const orderWriteRefused: FilterHook = () => {
  throw Forbidden('Orders are placed and changed only through /erp/orders');
};

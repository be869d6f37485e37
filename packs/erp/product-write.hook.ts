import type { FilterHook } from '../../core/pack-api.js';

/** `erp.product.create`: the server's number, a free sku, the initial movement, erp.inventory.updated. */
export const productCreate: FilterHook = ({ id, data }, rc, pack) => pack.use('erp.catalog').beforeCreate(rc, id, data);

/** `erp.product.update`: number kept, stock by admins only and as a movement, erp.inventory.updated. */
export const productUpdate: FilterHook = async (payload, rc, pack) => {
  await pack.use('erp.catalog').beforeUpdate(rc, { ...payload, previous: payload.previous! });
};

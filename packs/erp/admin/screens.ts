import type { ConsoleScreens } from '../../../admin/src/pack-kit.js';

/**
 * ERP's console screens (declared by `admin` in packs/erp/index.ts). Products and orders are generated tables
 * and forms like any schema; beside them, what a schema cannot say: a product's stock, an order's transitions, its payments, parcels and refunds, and the
 * shop's dashboard cards.
 */
export default {
  routes: [{ path: '/erp/checkout', screen: () => import('./CheckoutSettings.js') }],
  menu: [{ section: 'Shop', label: 'Checkout settings', to: '/erp/checkout', role: 'admin', needs: 'erp.order' }],
  panels: [
    { resource: 'erp.product', on: ['show', 'edit'], panel: () => import('./ProductStock.js') },
    { resource: 'erp.order', on: ['show'], panel: () => import('./OrderTransitions.js') },
    { resource: 'erp.order', on: ['show'], panel: () => import('./OrderParts.js') },
  ],
  // The shop's cards on the dashboard: sales per day as a chart, low stock.
  widgets: [{ widget: () => import('./ShopDashboard.js'), needs: 'erp.order' }],
} satisfies ConsoleScreens;

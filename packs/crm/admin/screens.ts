import type { ConsoleScreens } from '../../../admin/src/pack-kit.js';

/**
 * CRM's console screens (declared by `admin` in packs/crm/index.ts): a ticket's status moves and history on its
 * page, a new ticket through the pack's route (tickets are sealed), abandoned-cart recovery and the coupons it
 * made. The menu section shows when the tenant has the CRM module (its `crm.ticket` schema is listed).
 */
export default {
  routes: [
    { path: '/crm/tickets/new', screen: () => import('./TicketCreate.js') },
    { path: '/crm/carts', screen: () => import('./Carts.js') },
    { path: '/crm/coupons', screen: () => import('./Coupons.js') },
  ],
  menu: [
    { section: 'CRM', label: 'New support ticket', to: '/crm/tickets/new', role: 'editor', needs: 'crm.ticket' },
    { section: 'CRM', label: 'Abandoned carts', to: '/crm/carts', role: 'admin', needs: 'crm.ticket' },
    { section: 'CRM', label: 'Coupons', to: '/crm/coupons', role: 'admin', needs: 'crm.ticket' },
  ],
  panels: [{ resource: 'crm.ticket', on: ['show'], panel: () => import('./TicketPanel.js') }],
  // The carts a recovery run would pick (its dry run), on the dashboard.
  widgets: [{ widget: () => import('./CartsWidget.js'), role: 'admin', needs: 'crm.ticket' }],
  listActions: [{ resource: 'crm.ticket', label: 'New ticket', to: '/crm/tickets/new', role: 'editor' }],
} satisfies ConsoleScreens;

import type { ComponentType } from 'react';

/**
 * What a pack's console module (`packs/<name>/admin/screens.ts`, named by `admin` in its definePack) declares as
 * its default export: plain data (`export default { ... } satisfies ConsoleScreens`, with `import type` only),
 * each screen a loader, so the console's first load carries the declarations alone and every screen's code (and
 * the kit it imports) comes on demand. The console shell renders them; it names no pack.
 */

/** The least role that sees an entry; `superadmin`: platform superadmins only. */
export type Role = 'viewer' | 'editor' | 'admin' | 'superadmin';

/** A screen's module, loaded when first shown: its default export is the component (no props). */
export type ScreenLoader = () => Promise<{ default: ComponentType }>;

/** A page of its own at `path` under /admin (a route of the console's router). */
export interface ConsoleRoute {
  path: string;
  screen: ScreenLoader;
}

/**
 * A link in the side menu, under `section` (sections come after the records, in pack order; `Administration` is the
 * console's own last one). `role`: the least role that sees it; `needs`: a schema (`ns.name`) the tenant must
 * list, i.e. the pack's module is licensed.
 */
export interface ConsoleMenuEntry {
  section: string;
  label: string;
  to: string;
  role?: Role;
  needs?: string;
}

/**
 * A panel under a record's page (`show`) or its edit form (`edit`) of the schema `resource` (`ns.name`): what the
 * schema cannot say, such as an order's transitions or a product's stock ledger. It reads the record with
 * react-admin's `useRecordContext` and reloads it with `useRefresh`.
 */
export interface ConsolePanel {
  resource: string;
  on: Array<'show' | 'edit'>;
  panel: ScreenLoader;
}

/** A link in the toolbar of a schema's table (a pack's own create form, when its route writes the records). */
export interface ConsoleListAction {
  resource: string;
  label: string;
  to: string;
  role?: Role;
}

/** A card on the dashboard. */
export interface ConsoleWidget {
  widget: ScreenLoader;
  role?: Role;
  needs?: string;
}

/** The input a field gets instead of the one its JSON type gives: `field` in every schema of `namespace`. */
export interface ConsoleFieldInput {
  namespace: string;
  field: string;
  input: 'markdown';
}

export interface ConsoleScreens {
  routes?: ConsoleRoute[];
  menu?: ConsoleMenuEntry[];
  panels?: ConsolePanel[];
  listActions?: ConsoleListAction[];
  widgets?: ConsoleWidget[];
  inputs?: ConsoleFieldInput[];
  /**
   * Where the tenant picker finds the tenants a superadmin may act on: an API path (without /api/v1, called without
   * X-Tenant-Id) answering `{ items: [{ id }] }` or `[{ id }]`. The first pack that says it is asked.
   */
  tenantList?: string;
  /** Where a superadmin creates a tenant: an API path answering POST `{ name }` with `{ id }` (called without X-Tenant-Id). */
  tenantCreate?: string;
  /** Schemas (`ns.name`) the console leaves out of its menu and resources (records only the pack's own screens show). */
  hidden?: string[];
}


import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import { packScreens } from '../../pack-screens.generated.js';
import { session } from '../api/session.js';
import type { ConsoleFieldInput, ConsoleListAction, ConsoleMenuEntry, ConsolePanel, ConsoleRoute, ConsoleWidget, Role, ScreenLoader } from './console-screens.js';

/**
 * The packs' console screens, as their definitions declare them (`admin` in definePack): scripts/build-admin.ts
 * writes admin/pack-screens.generated.ts from config/packs.ts, which imports each declared module. The shell reads
 * them from here only: menu entries, routes, record panels, list actions, dashboard widgets, field inputs and
 * hidden schemas. Nothing here names a pack. (test/admin/console-pack-screens.test.ts checks the declarations: paths
 * that start with / and that no two packs share, schemas of the declaring pack's own namespaces.)
 */

const declared = packScreens.map((p) => p.screens);

export const packRoutes: ConsoleRoute[] = declared.flatMap((s) => s.routes ?? []);
export const packMenu: ConsoleMenuEntry[] = declared.flatMap((s) => s.menu ?? []);
export const packWidgets: ConsoleWidget[] = declared.flatMap((s) => s.widgets ?? []);
const panels: ConsolePanel[] = declared.flatMap((s) => s.panels ?? []);
const listActions: ConsoleListAction[] = declared.flatMap((s) => s.listActions ?? []);
const inputs: ConsoleFieldInput[] = declared.flatMap((s) => s.inputs ?? []);
/** Where the tenant picker lists tenants (superadmins), if a pack says. */
export const tenantList = declared.find((s) => s.tenantList)?.tenantList ?? null;
/** Where a superadmin creates a tenant (the dashboard's "create your first tenant"), if a pack says. */
export const tenantCreate = declared.find((s) => s.tenantCreate)?.tenantCreate ?? null;
/** Schemas the console leaves out (`ns.name`). */
export const hiddenSchemas = new Set(declared.flatMap((s) => s.hidden ?? []));

/** Whether the session reaches an entry's role (none: everyone signed in). */
export const allowed = (role: Role | undefined) => (role === 'superadmin' ? session.me?.isSuperadmin === true : session.can(role ?? 'viewer'));

/** Whether an entry shows for the session and the tenant's schemas (its role, and the schema it needs listed). */
export const shown = (entry: { role?: Role; needs?: string }, schemas: Array<{ namespace: string; name: string }>) =>
  allowed(entry.role) && (!entry.needs || schemas.some((s) => `${s.namespace}.${s.name}` === entry.needs));

export const panelsFor = (resource: string, on: 'show' | 'edit') => panels.filter((p) => p.resource === resource && p.on.includes(on));
export const listActionsFor = (resource: string) => listActions.filter((a) => a.resource === resource);
export const inputFor = (namespace: string, field: string) => inputs.find((i) => i.namespace === namespace && i.field === field)?.input;

/** The lazy component of a screen's loader, made once (React.lazy per render would load it again). */
const components = new Map<ScreenLoader, LazyExoticComponent<ComponentType>>();
export function screenOf(loader: ScreenLoader): LazyExoticComponent<ComponentType> {
  let component = components.get(loader);
  if (!component) {
    component = lazy(loader);
    components.set(loader, component);
  }
  return component;
}

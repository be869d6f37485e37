import { lazy, type ComponentType, type LazyExoticComponent } from 'react';
import { session } from '../api/session.js';
import type { ConsoleFieldInput, ConsoleListAction, ConsoleMenuEntry, ConsolePanel, ConsoleRoute, ConsoleScreens, ConsoleWidget, Role, ScreenLoader } from './console-screens.js';

/**
 * The packs' console screens, as their definitions declare them (`admin` in definePack): scripts/build-admin.ts
 * writes admin/pack-screens.generated.ts from config/packs.ts, which imports each declared module, and the console's
 * start (start.tsx) hands them to `registerPackScreens` before the first render. The shell reads them from here
 * only: menu entries, routes, record panels, list actions, dashboard widgets, field inputs and hidden schemas.
 * Nothing here names a pack, and nothing here imports the packs: their screens import the console kit, which
 * imports the shell, so the shell's modules must not import them back. (test/admin/console-pack-screens.test.ts
 * checks the declarations: paths that start with / and that no two packs share, schemas of the declaring pack's own
 * namespaces.)
 */

export const packRoutes: ConsoleRoute[] = [];
export const packMenu: ConsoleMenuEntry[] = [];
export const packWidgets: ConsoleWidget[] = [];
const panels: ConsolePanel[] = [];
const listActions: ConsoleListAction[] = [];
const inputs: ConsoleFieldInput[] = [];
/** Where the tenant picker lists tenants (superadmins), if a pack says. */
export let tenantList: string | null = null;
/** Where a superadmin creates a tenant (the dashboard's "create your first tenant"), if a pack says. */
export let tenantCreate: string | null = null;
/** Schemas the console leaves out (`ns.name`). */
export const hiddenSchemas = new Set<string>();

/** Takes the packs' declarations, once, before the console renders (in config/packs.ts order: the first pack that names a tenant list wins). */
export function registerPackScreens(declared: ConsoleScreens[]): void {
  for (const s of declared) {
    packRoutes.push(...(s.routes ?? []));
    packMenu.push(...(s.menu ?? []));
    packWidgets.push(...(s.widgets ?? []));
    panels.push(...(s.panels ?? []));
    listActions.push(...(s.listActions ?? []));
    inputs.push(...(s.inputs ?? []));
    for (const name of s.hidden ?? []) hiddenSchemas.add(name);
    tenantList ??= s.tenantList ?? null;
    tenantCreate ??= s.tenantCreate ?? null;
  }
}

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

import type { PackDefinition } from '../core/kernel/define-pack.js';
import tenantAdmin from '../packs/tenant-admin/index.js';
import crm from '../packs/crm/index.js';
import erp from '../packs/erp/index.js';

/** The packs this service runs, in load order. Explicit: no folder scanning. */
export const packs: PackDefinition[] = [tenantAdmin, crm, erp];

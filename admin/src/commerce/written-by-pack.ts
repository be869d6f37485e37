/** Schemas whose records only their pack's routes write: the console shows them read-only, plus hand-made panels. */
export const WRITTEN_BY_PACK = new Set(['erp.order', 'crm.ticket']);

/** An event as the product raises it, in process and (signed) to connectors. */
export interface PlatformEvent {
  id: string;
  /** Past tense, dotted: `crm.deal.updated`, `tenant.member.invited`. */
  name: string;
  tenantId: string | null;
  product: string | null;
  occurredAt: string;
  payload: Record<string, unknown>;
}

export const EVENT_NAME = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/;

/** `erp.*` matches every event that starts with `erp.`; anything else matches itself only. */
export function eventMatches(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return name.startsWith(pattern.slice(0, -1));
  return pattern === name;
}

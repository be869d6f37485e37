import type { RequestContext } from '../base/request-context.js';

export type RecordAction = 'create' | 'update' | 'delete';

/** What a filter hook sees: the document about to be written (a copy it may change) and, on update/delete, the stored one. */
export interface HookPayload {
  action: RecordAction;
  namespace: string;
  schema: string;
  /** The record id (on create: the id it will get). */
  id: string;
  /** The new document without server-managed fields (on delete: the stored document). */
  data: Record<string, unknown>;
  /** The stored document before the change (update and delete). */
  previous: Record<string, unknown> | null;
  /** The version the write makes (1 on create; on delete the stored one). */
  version: number;
  /** The pack writing with its own authority (through its context's records), or null for the kernel's callers (/data, bulk, import, MCP). */
  writer: string | null;
  /** What the writing pack tells its hooks about the change (ChangeOptions.note), or null. */
  note: Readonly<Record<string, unknown>> | null;
}

/** A hook as the registry runs it: the pack's filter hook with its pack context already bound (core/kernel/pack-loader.ts). */
export type BoundHook = (payload: HookPayload, rc: RequestContext) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

interface RegisteredHook {
  key: string;
  hook: BoundHook;
}

/**
 * Filter hooks: ordered, awaited, inside the write transaction. `ns.schema.action` hooks run after
 * `ns.*.action` hooks, each in pack order. A hook may return a changed document or throw to veto.
 */
export class HookRegistry {
  private readonly hooks: RegisteredHook[] = [];
  /** The hooks of an action on a schema, worked out once (a bulk write asks once per item). */
  private readonly matched = new Map<string, RegisteredHook[]>();

  register(key: string, hook: BoundHook): void {
    this.hooks.push({ key, hook });
    this.matched.clear();
  }

  has(action: RecordAction, namespace: string, schema: string): boolean {
    return this.matching(action, namespace, schema).length > 0;
  }

  async run(payload: HookPayload, rc: RequestContext): Promise<Record<string, unknown>> {
    let data = payload.data;
    for (const { hook } of this.matching(payload.action, payload.namespace, payload.schema)) {
      const changed = await hook({ ...payload, data }, rc);
      if (changed) data = changed;
    }
    return data;
  }

  private matching(action: RecordAction, namespace: string, schema: string): RegisteredHook[] {
    const exact = `${namespace}.${schema}.${action}`;
    let found = this.matched.get(exact);
    if (!found) {
      const wildcard = `${namespace}.*.${action}`;
      found = [...this.hooks.filter((h) => h.key === wildcard), ...this.hooks.filter((h) => h.key === exact)];
      // Bounded by the schemas written to; tenants' own schemas are many, so the map is kept small.
      if (this.matched.size >= 10_000) this.matched.clear();
      this.matched.set(exact, found);
    }
    return found;
  }
}

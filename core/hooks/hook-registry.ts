import type { FilterHook, HookPayload, RecordAction } from '../kernel/define-pack.js';
import type { PackContext } from '../kernel/pack-context.js';
import type { RequestContext } from '../kernel/request-context.js';

interface RegisteredHook {
  key: string;
  hook: FilterHook;
  pack: PackContext;
}

/**
 * Filter hooks: ordered, awaited, inside the write transaction. `ns.schema.action` hooks run after
 * `ns.*.action` hooks, each in pack order. A hook may return a changed document or throw to veto.
 */
export class HookRegistry {
  private readonly hooks: RegisteredHook[] = [];
  /** The hooks of an action on a schema, worked out once (a bulk write asks once per item). */
  private readonly matched = new Map<string, RegisteredHook[]>();

  register(key: string, hook: FilterHook, pack: PackContext): void {
    this.hooks.push({ key, hook, pack });
    this.matched.clear();
  }

  has(action: RecordAction, namespace: string, schema: string): boolean {
    return this.matching(action, namespace, schema).length > 0;
  }

  async run(payload: HookPayload, rc: RequestContext): Promise<Record<string, unknown>> {
    let data = payload.data;
    for (const { hook, pack } of this.matching(payload.action, payload.namespace, payload.schema)) {
      const changed = await hook({ ...payload, data }, rc, pack);
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

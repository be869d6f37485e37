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

  register(key: string, hook: FilterHook, pack: PackContext): void {
    this.hooks.push({ key, hook, pack });
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
    const wildcard = `${namespace}.*.${action}`;
    const exact = `${namespace}.${schema}.${action}`;
    return [...this.hooks.filter((h) => h.key === wildcard), ...this.hooks.filter((h) => h.key === exact)];
  }
}

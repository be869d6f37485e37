import type { RequestContext } from '../base/request-context.js';
import type { TenantRecord } from '../tenants/tenants.repository.js';

type Contribution = (rc: RequestContext, tenant: TenantRecord) => Promise<Record<string, number>>;

/**
 * Named seeds (`healthcare`) put together from the packs' `seeds` contributions, run in load order inside
 * the caller's transaction. The kernel knows no seed's content: each pack writes its own with its own rules.
 */
export class Seeds {
  private readonly contributions = new Map<string, Contribution[]>();

  add(name: string, contribution: Contribution): void {
    const list = this.contributions.get(name) ?? [];
    list.push(contribution);
    this.contributions.set(name, list);
  }

  /** The seed names some pack contributes to. */
  names(): string[] {
    return [...this.contributions.keys()];
  }

  /** Runs every contribution to `name` for the tenant; returns the counts written per kind, summed. */
  async run(rc: RequestContext, name: string, tenant: TenantRecord): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const contribution of this.contributions.get(name) ?? []) {
      for (const [kind, count] of Object.entries(await contribution(rc, tenant))) counts[kind] = (counts[kind] ?? 0) + count;
    }
    return counts;
  }
}

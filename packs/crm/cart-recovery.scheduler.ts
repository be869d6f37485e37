import { systemContext } from '../../core/pack-api.js';
import type { PackContext } from '../../core/pack-api.js';
import { RECOVERY_DEFAULTS } from './cart-recovery.service.js';

const TENANT_PAGE = 200;

/**
 * The opt-in schedule of the abandoned-cart recovery (CART_RECOVERY_INTERVAL_MINUTES): every interval, for
 * every active tenant with the crm module, a run with the defaults. Safe with several processes: a tenant's run
 * of an interval is claimed first by a counter row of that interval (the kernel's rate limits, one hit allowed),
 * so one process runs it; should two runs still overlap (a run longer than the interval), each cart is claimed on
 * its own key, and no cart gets two coupons.
 */
export class CartRecoveryScheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(private readonly pack: PackContext) {}

  start(): void {
    const minutes = this.pack.config.cartRecoveryIntervalMinutes;
    if (!minutes) return;
    const intervalMs = Math.round(minutes * 60_000);
    this.timer = setInterval(() => {
      this.running ??= this.runAll(intervalMs).finally(() => { this.running = null; });
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass over every tenant; a tenant whose run fails is logged and the others go on. */
  async runAll(intervalMs: number): Promise<void> {
    for (let offset = 0; ; offset += TENANT_PAGE) {
      const { items } = await this.pack.tenants.list(null, TENANT_PAGE, offset);
      for (const tenant of items) {
        if (tenant.status !== 'active' || !(await this.pack.tenants.isModuleEnabled(null, tenant.id, 'crm'))) continue;
        const claim = await this.pack.rateLimits.hit(tenant.id, 'crm-cart-recovery', { limit: 1, windowMs: intervalMs });
        if (!claim.allowed) continue;
        try {
          const result = await this.pack.use('crm.cartRecovery').run(systemContext(tenant.id, this.pack.logger), RECOVERY_DEFAULTS);
          if (result.recovered.length) this.pack.logger.info({ tenantId: tenant.id, recovered: result.recovered.length }, 'abandoned carts recovered');
        } catch (err) {
          this.pack.logger.error({ err, tenantId: tenant.id }, 'scheduled cart recovery failed');
        }
      }
      if (items.length < TENANT_PAGE) return;
    }
  }
}

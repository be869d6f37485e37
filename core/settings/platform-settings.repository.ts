import type { Database } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';

export const PLATFORM_SCOPE = '_platform';

export interface StoredSetting {
  key: string;
  value: string;
  encrypted: boolean;
  updatedAt: string;
}

/** Rows of platform_settings. */
export class PlatformSettingsRepository {
  constructor(private readonly db: Database) {}

  async all(rc: RequestContext | null): Promise<StoredSetting[]> {
    const rows = await this.db.sql(rc).run(this.db.query('platform_settings').where({ tenant_id: PLATFORM_SCOPE }).orderBy('key'));
    return rows.map((r: any) => ({ key: r.key, value: r.value, encrypted: Boolean(r.encrypted), updatedAt: r.updated_at }));
  }

  async upsert(rc: RequestContext, setting: StoredSetting): Promise<void> {
    await this.db.sql(rc).run(this.db.query('platform_settings')
      .insert({ tenant_id: PLATFORM_SCOPE, key: setting.key, value: setting.value, encrypted: setting.encrypted, updated_at: setting.updatedAt })
      .onConflict(['tenant_id', 'key'])
      .merge(['value', 'encrypted', 'updated_at']));
  }
}

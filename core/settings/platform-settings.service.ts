import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import type { Logger } from 'pino';
import type { Config } from '../../config/index.js';
import type { Database } from '../db/database.js';
import { nowIso } from '../base/ids.js';
import { fromRoot } from '../base/package-root.js';
import type { EventsService } from '../events/events.service.js';
import { ValidationFailed } from '../base/errors.js';
import type { RequestContext } from '../base/request-context.js';
import { createAjv, toIssues } from '../base/ajv.js';
import { PlatformSettingsRepository } from './platform-settings.repository.js';
import { SecretBox } from '../base/secret-box.js';
import type { SettingsProvider, SmtpSettings } from '../mail/settings-provider.js';

const URL_KEYS = ['FRONTEND_URL', 'INVITE_LOGIN_URL'] as const;

export const SETTING_KEYS = [
  'SMTP_HOST', 'SMTP_PORT', 'SMTP_SECURE', 'SMTP_USER', 'SMTP_PASSWORD', 'SMTP_FROM', 'FRONTEND_URL', 'INVITE_LOGIN_URL',
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];
export type PlatformSettings = Record<SettingKey, string | number | boolean | null>;

/** Keys stored encrypted and never shown. */
export const SECRET_KEYS: ReadonlySet<SettingKey> = new Set(['SMTP_PASSWORD']);
export const SECRET_MASK = '********';

const schemaFile = fromRoot('schemas', 'platform', 'platform-settings.schema.json');

/**
 * The platform settings store: values a superadmin sets override the first values from the environment
 * (SMTP_*, FRONTEND_URL, INVITE_LOGIN_URL). Secrets are sealed with AES-256-GCM and leave the service
 * only masked. Nothing is cached in memory, so every process sees a change at once.
 */
export class PlatformSettingsService implements SettingsProvider {
  private readonly repository: PlatformSettingsRepository;
  private readonly box: SecretBox;
  private readonly validate: ValidateFunction;

  constructor(
    private readonly db: Database,
    private readonly config: Config,
    private readonly events: EventsService,
    private readonly logger?: Logger,
  ) {
    this.repository = new PlatformSettingsRepository(db);
    this.box = new SecretBox(config.settingsEncryptionKey);
    this.validate = createAjv().compile(JSON.parse(readFileSync(schemaFile, 'utf8')));
  }

  /** The environment's values: what applies until a superadmin changes a key. */
  private defaults(): PlatformSettings {
    const { smtp } = this.config;
    return {
      SMTP_HOST: smtp.host, SMTP_PORT: smtp.port, SMTP_SECURE: smtp.secure, SMTP_USER: smtp.user, SMTP_PASSWORD: smtp.password,
      SMTP_FROM: smtp.from, FRONTEND_URL: this.config.frontendUrl, INVITE_LOGIN_URL: this.config.inviteLoginUrl,
    };
  }

  /** The effective settings, secrets in clear text: for the kernel only, never for a response. */
  async effective(rc: RequestContext | null = null): Promise<PlatformSettings> {
    const settings = this.defaults();
    for (const row of await this.repository.all(rc)) {
      if (!(SETTING_KEYS as readonly string[]).includes(row.key)) continue;
      const key = row.key as SettingKey;
      settings[key] = row.encrypted ? this.openOrNull(row.value, key) : (JSON.parse(row.value) as PlatformSettings[SettingKey]);
    }
    return settings;
  }

  /** The settings as a response shows them: secrets masked (null when unset). */
  async masked(rc: RequestContext | null = null): Promise<PlatformSettings> {
    return mask(await this.effective(rc));
  }

  /**
   * Applies a partial update. A secret sent as the mask keeps its stored value; null unsets a key.
   * Emits `platform.settings.updated` with the changed key names only.
   */
  async update(rc: RequestContext, patch: Record<string, unknown>): Promise<PlatformSettings> {
    if (!this.validate(patch)) throw ValidationFailed('Invalid platform settings', toIssues(this.validate.errors));
    // The URLs are parsed where they are used (invitation links): one that the URL parser refuses is refused here.
    const badUrls = URL_KEYS.filter((key) => typeof patch[key] === 'string' && !URL.canParse(patch[key] as string));
    if (badUrls.length) throw ValidationFailed('Invalid platform settings', badUrls.map((key) => ({ path: `/${key}`, message: 'must be an http or https URL' })));
    return this.db.transaction(rc, async (rc) => {
      const current = await this.effective(rc);
      const changed: SettingKey[] = [];
      const now = nowIso();
      for (const [name, value] of Object.entries(patch)) {
        const key = name as SettingKey;
        if (SECRET_KEYS.has(key) && value === SECRET_MASK) continue;
        if (current[key] === value) continue;
        const sealed = SECRET_KEYS.has(key) && typeof value === 'string';
        await this.repository.upsert(rc, {
          key, encrypted: sealed, updatedAt: now, value: sealed ? this.box.seal(value as string, key) : JSON.stringify(value),
        });
        changed.push(key);
      }
      if (changed.length) {
        await this.events.publish(rc, { name: 'platform.settings.updated', payload: { keys: changed } });
      }
      return mask(await this.effective(rc));
    });
  }

  /** A secret sealed under another SETTINGS_ENCRYPTION_KEY reads as unset (and can be set again), never as a 500. */
  private openOrNull(sealed: string, key: SettingKey): string | null {
    try {
      return this.box.open(sealed, key);
    } catch {
      this.logger?.warn({ key }, 'a stored secret could not be decrypted (was SETTINGS_ENCRYPTION_KEY changed?); it counts as unset');
      return null;
    }
  }

  async getSmtp(): Promise<SmtpSettings> {
    const s = await this.effective();
    return {
      host: s.SMTP_HOST as string | null,
      port: s.SMTP_PORT as number | null,
      secure: s.SMTP_SECURE as boolean | null,
      user: s.SMTP_USER as string | null,
      password: s.SMTP_PASSWORD as string | null,
      from: s.SMTP_FROM as string | null,
    };
  }
}

function mask(settings: PlatformSettings): PlatformSettings {
  const out = { ...settings };
  for (const key of SECRET_KEYS) out[key] = out[key] === null || out[key] === undefined ? null : SECRET_MASK;
  return out;
}

import { readFileSync } from 'node:fs';
import type { ValidateFunction } from 'ajv';
import { applyMergePatch, fromRoot, createAjv, type PackContext, nowIso, type RequestContext, type TenantRecord, toIssues, ValidationFailed } from '../../core/pack-api.js';
import { TenantDocumentsRepository } from './tenant-documents.repository.js';

const ajv = createAjv();

function loadSchema(file: string): ValidateFunction {
  return ajv.compile(JSON.parse(readFileSync(fromRoot('schemas', 'tenant-admin', file), 'utf8')));
}

const validators = {
  site_config: loadSchema('site-config.schema.json'),
  branding: loadSchema('branding.schema.json'),
};

export type ProfileKind = keyof typeof validators;

/**
 * A tenant's site config and branding: JSON documents validated by the schemas in schemas/tenant-admin,
 * changed by JSON merge patch. A tenant without a stored document gets the defaults.
 */
export class TenantDocumentsService {
  readonly repository: TenantDocumentsRepository;

  constructor(private readonly db: PackContext['db'], private readonly locales?: PackContext['locales']) {
    this.repository = new TenantDocumentsRepository(db);
  }

  private defaults(kind: ProfileKind, tenant: TenantRecord): Record<string, unknown> {
    if (kind === 'branding') return {};
    return { siteName: tenant.name, defaultLocale: 'en', locales: ['en'], timezone: 'UTC', navigation: [] };
  }

  /** The tenant's locales (CONTRACT.md 17.2): its site config's, English alone without one. */
  async localesOf(rc: RequestContext | null, tenantId: string): Promise<{ defaultLocale: string; locales: string[] }> {
    return localesIn((await this.repository.get(rc, tenantId, 'site_config')) ?? {});
  }

  async get(rc: RequestContext | null, tenant: TenantRecord, kind: ProfileKind): Promise<Record<string, unknown>> {
    return (await this.repository.get(rc, tenant.id, kind)) ?? this.defaults(kind, tenant);
  }

  /** Applies a JSON merge patch and validates the result; 400 validation_failed names each failing path. */
  async patch(rc: RequestContext, tenant: TenantRecord, kind: ProfileKind, patch: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.db.transaction(rc, async (rc) => {
      const next = applyMergePatch(await this.get(rc, tenant, kind), patch) as Record<string, unknown>;
      const validate = validators[kind];
      if (!validate(next)) throw ValidationFailed(`Invalid ${kind === 'branding' ? 'branding' : 'site config'}`, toIssues(validate.errors));
      if (kind === 'site_config') checkLocales(next);
      await this.repository.put(rc, tenant.id, kind, next, nowIso());
      if (kind === 'site_config') await this.locales?.changed(rc, tenant.id);
      return next;
    });
  }
}

/** A site config's locales: `defaultLocale` (English when unset) and `locales` (the default alone when unset). */
function localesIn(config: Record<string, unknown>): { defaultLocale: string; locales: string[] } {
  const defaultLocale = typeof config.defaultLocale === 'string' ? config.defaultLocale : 'en';
  const locales = Array.isArray(config.locales) && config.locales.length ? (config.locales as string[]) : [defaultLocale];
  return { defaultLocale, locales };
}

/** `defaultLocale` must be one of `locales` (CONTRACT.md 17.2): 400 validation_failed at `/defaultLocale`. */
function checkLocales(config: Record<string, unknown>): void {
  const { defaultLocale, locales } = localesIn(config);
  if (!locales.includes(defaultLocale)) {
    throw ValidationFailed('Invalid site config', [{ path: '/defaultLocale', message: `must be one of locales (${locales.join(', ')})` }]);
  }
}

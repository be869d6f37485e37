import type { Config } from '../../config/index.js';
import type { RouteEntry } from '../http/route.js';
import type { RequestContext } from '../base/request-context.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import { DEFAULT_LOCALES, type LocalesResolver } from '../tenants/tenant-locales.js';
import { addSchemaPaths, describeDataPaths, narrowLocales } from './data-paths.js';
import { buildPlatformDocument, markStorableInput, type OpenApiDocument } from './openapi.builder.js';

export interface OpenApiSources {
  /** The app's route table; read on first use, once every router has declared its routes. */
  routes: RouteEntry[];
  config: Config;
  schemas: SchemaRegistry;
  tenants: TenantsService;
  /** Licensed module of each pack by name (its routes are gated by it unless they say otherwise). */
  packModules?: Record<string, string | null>;
  /** The tenants' locales: a tenant's document names them as the values of `locale` its data paths take. */
  locales?: LocalesResolver;
}

/** The platform document (built once) and a tenant's document (the platform's plus its schemas). */
export class OpenApiService {
  private platform: { doc: OpenApiDocument; json: string } | null = null;

  constructor(private readonly sources: OpenApiSources) {}

  platformDocument(): OpenApiDocument {
    return structuredClone(this.platformCached().doc);
  }

  /** The platform document as JSON text (cached; the route table does not change after boot). */
  platformJson(): string {
    return this.platformCached().json;
  }

  /** The document for a tenant: every schema it sees whose licensed module is enabled for it. */
  async tenantDocument(rc: RequestContext & { tenantId: string }): Promise<OpenApiDocument> {
    const { schemas, tenants } = this.sources;
    const visible = await schemas.list(rc);
    const enabled = new Map<string, boolean>();
    const usable = [];
    for (const schema of visible) {
      const appCode = schemas.moduleOf(schema.namespace);
      if (appCode && !enabled.has(appCode)) enabled.set(appCode, await tenants.isModuleEnabled(null, rc.tenantId, appCode));
      if (!appCode || enabled.get(appCode)) usable.push(schema);
    }
    const doc = this.platformDocument();
    doc.info.description += `\n\nThis document is for the tenant \`${rc.tenantId}\`.`;
    addSchemaPaths(doc, usable);
    if (this.sources.locales) narrowLocales(doc, await this.sources.locales.localesOf(rc, rc.tenantId));
    return markStorableInput(doc);
  }

  private platformCached(): { doc: OpenApiDocument; json: string } {
    if (!this.platform) {
      const doc = buildPlatformDocument(this.sources.routes, this.sources.config, this.sources.packModules);
      describeDataPaths(doc);
      narrowLocales(doc, DEFAULT_LOCALES);
      markStorableInput(doc);
      this.platform = { doc, json: JSON.stringify(doc) };
    }
    return this.platform;
  }
}

import { type ErrorCode, Forbidden, HTTP_URL, type JsonSchema, type PackContext, type PackRouter, type RequestContext, ROLE_RANK, ValidationFailed } from '../../core/pack-api.js';
import { importResponse } from './cms-responses.js';
import { importSite, type ImportOptions, type ImportResult } from './site-import.service.js';

const importFlags = {
  url: { ...HTTP_URL, description: 'The start page (http or https)' },
  depth: { type: 'integer', minimum: 0, maximum: 3, default: 1, description: 'Links followed from the start page' },
  use_ai: { type: 'boolean', default: false, description: 'Improve titles, descriptions and suggestions with the configured LLM' },
  dry_run: { type: 'boolean', default: false, description: 'Write nothing; return the plan' },
  apply_suggestions: { type: 'boolean', default: false, description: 'Apply the suggested fixes (descriptions, distinct titles)' },
  apply_navigation: { type: 'boolean', default: false, description: 'Write the site navigation to the site config' },
  apply_branding: { type: 'boolean', default: false, description: 'Write theme colour, logo, favicon and colours to the branding' },
  publish: { type: 'boolean', default: false, description: 'Publish the imported pages (else drafts)' },
} as const;

const importBody: JsonSchema = { type: 'object', additionalProperties: false, required: ['url'], properties: importFlags };

export const SUPPORTED_PLATFORMS = ['website'] as const;

const competitorBody: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sourcePlatform', 'url'],
  properties: { sourcePlatform: { type: 'string', enum: [...SUPPORTED_PLATFORMS] }, ...importFlags },
};

const errors: ErrorCode[] = ['validation_failed', 'url_not_allowed', 'upstream_failed', 'module_disabled', 'forbidden'];

/** POST /cms/import-url and POST /migration/competitor-import (the same pipeline with a migration report). */
export function importRoutes(router: PackRouter, pack: PackContext): void {
  router.post('/cms/import-url', {
    summary: 'Import a website (same-origin crawl) into pages, with navigation, branding and suggestions',
    tags: ['cms'], auth: 'tenant', role: 'editor', body: importBody, response: importResponse, errors,
  }, async (ctx) => importSite(pack, ctx.state.rc, allowedFor(ctx.state.rc, withDefaults(ctx.state.body))));

  router.post('/migration/competitor-import', {
    summary: 'Migrate from another platform (sourcePlatform "website": the site import) and report',
    tags: ['migration'], auth: 'tenant', role: 'editor', body: competitorBody, errors,
    response: { ...importResponse, properties: { ...(importResponse.properties as object), sourcePlatform: { type: 'string' }, report: { type: 'object' } } },
  }, async (ctx) => {
    const { sourcePlatform, ...options } = ctx.state.body as Partial<ImportOptions> & { url: string; sourcePlatform: string };
    if (!(SUPPORTED_PLATFORMS as readonly string[]).includes(sourcePlatform)) {
      throw ValidationFailed(`The source platform "${sourcePlatform.slice(0, 40)}" is not supported; supported: ${SUPPORTED_PLATFORMS.join(', ')}`, [
        { path: '/sourcePlatform', message: `must be one of: ${SUPPORTED_PLATFORMS.join(', ')}` },
      ]);
    }
    const result = await importSite(pack, ctx.state.rc, allowedFor(ctx.state.rc, withDefaults(options)));
    return { sourcePlatform, ...result, report: migrationReport(result) };
  });
}

/** Writing the site config or branding is an admin's right (CONTRACT.md section 2), also through an import. */
function allowedFor(rc: RequestContext, options: ImportOptions): ImportOptions {
  const p = rc.principal;
  if ((options.apply_navigation || options.apply_branding) && !options.dry_run && p && !p.isSuperadmin && ROLE_RANK[p.role] < ROLE_RANK.admin) {
    throw Forbidden('apply_navigation and apply_branding change the site config and branding, which needs the admin role');
  }
  return options;
}

/** The flags with their documented defaults (the body validator does not fill them in). */
function withDefaults(body: Partial<ImportOptions> & { url: string }): ImportOptions {
  return {
    depth: 1, use_ai: false, dry_run: false, apply_suggestions: false, apply_navigation: false, apply_branding: false, publish: false,
    ...body,
  };
}

function migrationReport(result: ImportResult) {
  const warnings = [
    ...result.excluded.map((e) => `${e.url} was not imported (${e.reason})`),
    ...result.suggestions.map((s) => `${s.url}: ${s.message}`),
  ];
  return {
    pagesFound: result.stats.pagesCrawled,
    pagesImported: result.stats.created,
    pagesUpdated: result.stats.updated,
    pagesUnchanged: result.stats.skipped,
    navigationItems: result.navigation.length,
    brandingFound: Boolean(result.branding && (result.branding.themeColor || result.branding.logoUrl)),
    warnings: warnings.slice(0, 200),
    nextSteps: result.dryRun
      ? ['Run again without dry_run to write the pages']
      : ['Review the imported drafts', ...(result.applied.navigation ? [] : ['Set apply_navigation to take over the menu']), ...(result.applied.branding ? [] : ['Set apply_branding to take over colours and logo'])],
  };
}

import type { AppContext } from '../http/app-state.js';
import type { ErrorCode, PackRouter } from '../http/route.js';
import type { SchemaRegistry } from '../metadata/schema-registry.js';
import { target } from '../data/data.routes.js';
import type { DraftsService } from './drafts.service.js';

const draftErrorSchema = {
  type: 'object', required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, details: { type: 'array', items: { type: 'object' } } },
} as const;

/** A draft beside its record (CONTRACT.md 17.1). */
export const draftMetaSchema = {
  type: 'object',
  required: ['baseVersion', 'revision', 'updatedAt', 'updatedBy', 'scheduledAt', 'lastError', 'releaseId'],
  properties: {
    baseVersion: { type: 'integer', minimum: 0, description: 'The live version the draft was made from; 0 for a draft-only record' },
    revision: { type: 'integer', minimum: 1, description: 'Counts the draft\'s saves' },
    updatedAt: { type: 'string', format: 'date-time' },
    updatedBy: { type: 'string' },
    scheduledAt: { type: ['string', 'null'], format: 'date-time' },
    lastError: { anyOf: [draftErrorSchema, { type: 'null' }], description: 'Why its scheduled publish failed, until its next save' },
    releaseId: { type: ['string', 'null'] },
  },
} as const;

/** `{ item, draft }`. */
export const draftViewSchema = {
  type: 'object', required: ['item', 'draft'],
  properties: { item: { type: 'object', description: 'The record as the draft would make it' }, draft: draftMetaSchema },
} as const;

const publishBody = {
  type: 'object', additionalProperties: false,
  properties: { at: { type: 'string', format: 'date-time', description: 'Publish at this time (within 30 s after it) instead of now' } },
} as const;

/** The draft endpoints of every record of a schema with `workflow.drafts` (CONTRACT.md 17.1). */
export function draftRoutes(router: PackRouter, registry: SchemaRegistry, drafts: DraftsService): void {
  const module = (ctx: AppContext) => registry.moduleOf(ctx.params.ns);
  const tags = ['data'];
  const errors: ErrorCode[] = ['invalid_identifier', 'schema_not_found', 'module_disabled', 'not_found'];
  const DRAFT = '/data/:ns/:schema/:id/draft';

  router.put(DRAFT, {
    summary: 'Save a record\'s draft: a JSON merge patch over the current draft, else over the live record (?rebase=true: based on the current live version)',
    description: 'Validated like a write; nothing live changes (no revision, no live-change event, the live ETag stays). Emits `{ns}.{schema}.draft_updated`.',
    tags, auth: 'tenant', role: 'editor', module, response: draftViewSchema,
    query: {
      type: 'object', additionalProperties: false,
      properties: { rebase: { type: 'boolean' }, locale: { type: 'string', 'x-locale': 'one', description: 'The locale whose values of the localised fields the patch sets (not *)' } },
    },
    errors: [...errors, 'validation_failed', 'conflict'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const locale = await drafts.chooseLocale(ctx.state.rc, { locale: ctx.query.locale }, { all: false });
    return drafts.save(ctx.state.rc, ns, schema, ctx.params.id, ctx.state.body, { rebase: ctx.state.query.rebase === true, locale });
  });

  router.get(DRAFT, {
    summary: 'Read a record\'s draft (?locale=, * for every locale, fallback=false)', tags, auth: 'tenant', module, response: draftViewSchema,
    query: {
      type: 'object', additionalProperties: false,
      properties: { locale: { type: 'string', 'x-locale': 'any', description: 'A locale of the tenant, or * for every locale\'s values' }, fallback: { type: 'string', enum: ['true', 'false'] } },
    },
    errors: [...errors, 'validation_failed'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const locale = await drafts.chooseLocale(ctx.state.rc, { locale: ctx.query.locale, fallback: ctx.query.fallback });
    return drafts.get(ctx.state.rc, ns, schema, ctx.params.id, locale);
  });

  router.delete(DRAFT, {
    summary: 'Discard a record\'s draft (a draft-only record is gone with it)', tags, auth: 'tenant', role: 'editor', module, errors,
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    await drafts.discard(ctx.state.rc, ns, schema, ctx.params.id);
    return null;
  });

  router.post(`${DRAFT}/publish`, {
    summary: 'Publish a record\'s draft now (If-Match of the live version honoured), or with { at } at that time',
    description: 'Now: the draft becomes the next live version through the one write path (events, hooks, revision, knowledge, caches), '
      + 'and 200 `{ item }` is the live record; 409 when the live record moved from the draft\'s baseVersion, or the draft is bound to a release. '
      + 'With `at`: 200 `{ item, draft }` with `draft.scheduledAt`.',
    tags, auth: 'tenant', role: 'editor', module, body: publishBody,
    headers: [{ name: 'If-Match', required: false, schema: { type: 'string' }, description: 'The live version: `"3"`; 412 version_mismatch when it moved' }],
    response: { type: 'object', required: ['item'], properties: { item: { type: 'object' }, draft: draftMetaSchema } },
    errors: [...errors, 'validation_failed', 'conflict', 'version_mismatch', 'forbidden'],
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    const at = ctx.state.body.at;
    if (at !== undefined) return drafts.schedule(ctx.state.rc, ns, schema, ctx.params.id, at);
    const item = await drafts.publish(ctx.state.rc, ns, schema, ctx.params.id, ctx.get('If-Match') || null);
    ctx.set('ETag', `"${item.version}"`);
    return { item };
  });

  router.delete(`${DRAFT}/schedule`, {
    summary: 'Unschedule a draft\'s publish', tags, auth: 'tenant', role: 'editor', module, response: draftViewSchema, errors,
  }, async (ctx) => {
    const [ns, schema] = target(ctx);
    return drafts.unschedule(ctx.state.rc, ns, schema, ctx.params.id);
  });
}

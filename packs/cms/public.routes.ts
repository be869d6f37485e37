import { assertIdentifier, clientKey, NotFound, nowIso, type PackContext, type PackRouter, queryFromString, type RequestContext, SchemaNotFound, sendCacheable, toIssues, UUID_PATTERN, ValidationFailed } from '../../core/pack-api.js';
import { contentListResponse, knowledgeSearchResponse } from './cms-responses.js';
import { NON_CONTENT_TYPES } from './content-type.js';
import { formValidator, HONEYPOT_FIELD, type FormField } from './form-schema.js';

const tags = ['public'];
const PUBLIC_MAX_AGE = 60;
export const FORM_BODY_LIMIT = 64 * 1024;
/** Submissions per client address and form, counted in the database (shared by every process). */
export const FORM_RATE_LIMIT = { limit: 5, windowMs: 60_000 };
/** `?locale=` of the public runtime (CONTRACT.md 17.2): one of the site's locales, else 400 at /locale. */
const LOCALE_QUERY = { type: 'string', 'x-locale': 'any', minLength: 1, maxLength: 35, description: 'A locale of the site (default: its defaultLocale); `*` answers every locale\'s values' };

/**
 * The public site runtime (no authentication): published content, form submissions and knowledge
 * search. The route layer answers 404 tenant_not_found for unknown or suspended tenants.
 */
export function publicRoutes(router: PackRouter, pack: PackContext): void {
  router.get('/public/tenant/:tenantId/content/:contentType', {
    summary: 'Published content items of a type (?slug=, fields, limit, offset); drafts never appear',
    tags, auth: 'public', tenantParam: 'tenantId',
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        slug: { type: 'string', maxLength: 200 },
        fields: { type: 'string', maxLength: 1000, description: 'comma list of fields to return' },
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        offset: { type: 'integer', minimum: 0, maximum: 10000, default: 0 },
        sort: { type: 'string', enum: ['createdAt', '-createdAt', 'publishedAt', '-publishedAt', 'title', '-title'] },
        locale: LOCALE_QUERY,
        fallback: { type: 'boolean', default: true, description: 'false: a field without a value in the locale is null instead of the default locale\'s' },
      },
    },
    response: contentListResponse, errors: ['tenant_not_found', 'schema_not_found', 'validation_failed', 'invalid_identifier', 'invalid_filter'],
    answers: { 304: 'Not modified (If-None-Match)' },
  }, async (ctx) => {
    assertIdentifier('contentType', ctx.params.contentType);
    const type = ctx.params.contentType;
    if (NON_CONTENT_TYPES.has(type)) throw SchemaNotFound({ ns: 'cms', name: type });
    const q = ctx.state.query as { slug?: string; fields?: string; limit: number; offset: number; sort?: string; locale?: string; fallback: boolean };
    const locale = await pack.records.chooseLocale(ctx.state.rc, { locale: q.locale, fallback: q.fallback });
    const query = queryFromString({ sort: q.sort ?? '-publishedAt', fields: q.fields });
    const filter = [{ field: 'status', value: 'published' }, ...(q.slug !== undefined ? [{ field: 'slug', value: q.slug }] : [])];
    const page = await pack.records.list(ctx.state.rc, 'cms', type, { ...query, filter, limit: q.limit, offset: q.offset }, { locale });
    page.pagination.nextCursor = null;
    sendCacheable(ctx, page, PUBLIC_MAX_AGE);
  });

  router.post('/public/tenant/:tenantId/forms/:formId/submit', {
    summary: 'Submit a published form (by id or slug); validated against its fields, rate-limited per client and form',
    tags, auth: 'public', tenantParam: 'tenantId', status: 201, bodyLimit: FORM_BODY_LIMIT, body: { type: 'object' },
    response: { type: 'object', properties: { id: { type: ['string', 'null'], description: 'null when the submission was dropped as spam' }, receivedAt: { type: 'string' } } },
    errors: ['tenant_not_found', 'not_found', 'validation_failed', 'payload_too_large', 'rate_limited', 'unsupported_media_type'],
  }, async (ctx) => {
    const rc = ctx.state.rc;
    const form = await findPublishedForm(pack, rc, ctx.params.formId);
    await pack.rateLimits.enforce(rc, `form:${form.id}:${clientKey(ctx.ip)}`, FORM_RATE_LIMIT);

    const { [HONEYPOT_FIELD]: honeypot, ...data } = ctx.state.body as Record<string, unknown>;
    const receivedAt = nowIso();
    if (honeypot !== undefined && honeypot !== '') {
      pack.logger.info({ tenantId: rc.tenantId, formId: form.id }, 'form submission dropped: honeypot filled');
      return { id: null, receivedAt };
    }
    const validate = formValidator(form.id, form.version, form.fields);
    if (!validate(data)) throw ValidationFailed('The submission does not match the form', toIssues(validate.errors));

    return pack.db.transaction(rc, async (rc) => {
      const submission = await pack.records.create(rc, 'cms', 'form_submission', { formId: form.id, data, receivedAt });
      await pack.events.publish(rc, {
        name: 'cms.form.submitted',
        payload: { formId: form.id, formSlug: form.slug, submissionId: submission.id, data, receivedAt },
      });
      return { id: submission.id, receivedAt };
    });
  });

  router.get('/public/tenant/:tenantId/knowledge', {
    summary: 'Search the published knowledge of a tenant: ranked items with highlighted snippets',
    tags, auth: 'public', tenantParam: 'tenantId',
    query: {
      type: 'object',
      required: ['q'],
      additionalProperties: false,
      properties: {
        q: { type: 'string', minLength: 1, maxLength: 200 },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
        offset: { type: 'integer', minimum: 0, maximum: 1000, default: 0 },
        locale: { type: 'string', 'x-locale': 'one', minLength: 1, maxLength: 35, description: 'Only entries of this locale of the site; without it every locale\'s' },
      },
    },
    response: knowledgeSearchResponse, errors: ['tenant_not_found', 'validation_failed'],
  }, async (ctx) => {
    const q = ctx.state.query as { q: string; limit: number; offset: number; locale?: string };
    if (q.locale !== undefined) await requireLocale(pack, ctx.state.rc, q.locale);
    const page = await pack.knowledge.search(ctx.state.rc, q.q, { limit: q.limit, offset: q.offset, locale: q.locale });
    sendCacheable(ctx, page, PUBLIC_MAX_AGE);
  });
}

/** 400 validation_failed at /locale unless `locale` is one of the site's locales. */
async function requireLocale(pack: PackContext, rc: RequestContext, locale: string): Promise<void> {
  const { locales } = await pack.locales.localesOf(rc, rc.tenantId!);
  if (!locales.includes(locale)) {
    throw ValidationFailed(`The site has no locale "${locale}"`, [{ path: '/locale', message: `must be one of the site's locales: ${locales.join(', ')}` }]);
  }
}

interface PublishedForm {
  id: string;
  slug: string;
  version: number;
  fields: FormField[];
}

/** A published form by id or slug; anything else (unknown, draft, archived) is 404. */
async function findPublishedForm(pack: PackContext, rc: RequestContext, idOrSlug: string): Promise<PublishedForm> {
  let form: Record<string, unknown> | null = null;
  if (UUID_PATTERN.test(idOrSlug)) form = await pack.records.find(rc, 'cms', 'form', idOrSlug);
  if (!form) {
    const found = await pack.records.list(rc, 'cms', 'form', { filter: [{ field: 'slug', op: 'eq', value: idOrSlug.slice(0, 200) }], limit: 1, count: false });
    form = found.items[0] ?? null;
  }
  if (!form || form.status !== 'published') throw NotFound('No published form with this id or slug');
  return { id: String(form.id), slug: String(form.slug), version: Number(form.version), fields: form.fields as FormField[] };
}

import { queryFromString, splitLocale, type AppContext, type JsonSchema, type PackContext, type PackRouter } from '../../core/pack-api.js';

const tags = ['cms'];

/**
 * GET and PATCH of one item of a content type under its own path (/cms/pages/:pageId, /cms/posts/:postId):
 * the records of /data/cms/{type}, read with an ETag and changed by a JSON merge patch (If-Match optional);
 * a patch to status "published" publishes the item (the content hooks index it as knowledge).
 */
export function contentItemRoutes(router: PackRouter, pack: PackContext, type: string, path: string, response: JsonSchema): void {
  const param = /:(\w+)$/.exec(path)?.[1];
  if (!param) throw new Error(`contentItemRoutes: ${path} does not end with a parameter`);

  // `?locale=` (CONTRACT.md 17.2): the localised fields in a locale of the site (reads also `fallback` and `*`).
  router.get(path, {
    summary: `Read a ${type} (?locale=, ?fallback=false: the localised fields in a locale of the site; * in every locale)`, tags, auth: 'tenant', response,
    errors: ['not_found', 'module_disabled', 'validation_failed'],
  }, async (ctx) => {
    const locale = await pack.records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale, fallback: ctx.query.fallback });
    const item = await pack.records.get(ctx.state.rc, 'cms', type, ctx.params[param], { locale });
    ctx.set('ETag', `"${item.version}"`);
    return item;
  });

  router.patch(path, {
    summary: `Update a ${type} with a JSON merge patch (status "published" publishes it, anything else unpublishes it; If-Match optional; ?locale=)`,
    tags, auth: 'tenant', role: 'editor', body: { type: 'object' }, response,
    errors: ['not_found', 'validation_failed', 'version_mismatch', 'conflict', 'module_disabled'],
  }, async (ctx) => {
    const locale = await pack.records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale }, { all: false });
    const item = await pack.records.update(ctx.state.rc, 'cms', type, ctx.params[param], ctx.state.body, { ifMatch: ctx.get('If-Match') || null, locale });
    ctx.set('ETag', `"${item.version}"`);
    return item;
  });
}

/** A list of a content type's items with the data API's query language and `?locale=` (`*`, `fallback`; CONTRACT.md 17.2). */
export async function listContent(pack: PackContext, ctx: AppContext, type: string): Promise<unknown> {
  const { locale, rest } = splitLocale(ctx.query);
  return pack.records.list(ctx.state.rc, 'cms', type, queryFromString(rest), { locale: await pack.records.chooseLocale(ctx.state.rc, locale) });
}

import { listQueryOf, pageResponse, recordResponse, WRITE_LOCALE_QUERY } from '../../core/pack-api.js';
import type { PackContext, PackRouter } from '../../core/pack-api.js';
import postDefinition from '../../schemas/cms/post.schema.json' with { type: 'json' };
import { contentItemRoutes, listContent } from './content-item.routes.js';

const fields = postDefinition.schema.properties;
const postResponse = recordResponse(postDefinition);

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['title', 'content'],
  properties: {
    title: fields.title,
    slug: { ...fields.slug, description: 'Made from the title when absent; a slug another post holds: 409 conflict' },
    content: { ...fields.content, description: 'Markdown' },
    status: { ...fields.status, description: 'published makes the post searchable at once (one knowledge entry per post)' },
    metadata: { ...fields.metadata, description: 'Free keys such as category and author' },
  },
};

/**
 * /cms/posts: the `post` content type (CONTRACT 11.6). A published post has exactly one knowledge entry
 * (sourceModule cms), kept in step by the content hooks inside the write's transaction.
 */
export function postsRoutes(router: PackRouter, pack: PackContext): void {
  const tags = ['cms'];

  router.get('/cms/posts', {
    summary: 'List posts, newest first (limit 1..200, default 50; offset default 0; the data API query language; ?locale=, *, fallback=false)',
    tags, auth: 'tenant', query: listQueryOf(postResponse, { locales: true }), response: pageResponse(postResponse),
    errors: ['validation_failed', 'invalid_filter', 'invalid_cursor', 'module_disabled', 'tenant_required'],
  }, (ctx) => listContent(pack, ctx, 'post'));

  router.post('/cms/posts', {
    summary: 'Create a post (slug from the title when absent; draft unless status says otherwise; ?locale=: the values are that locale\'s and the default\'s)',
    tags, auth: 'tenant', role: 'editor', status: 201, idempotent: true, body: createBody, response: postResponse,
    query: { type: 'object', additionalProperties: false, properties: { locale: WRITE_LOCALE_QUERY } },
    errors: ['validation_failed', 'conflict', 'module_disabled', 'forbidden', 'tenant_required'],
  }, async (ctx) => {
    const locale = await pack.records.chooseLocale(ctx.state.rc, { locale: ctx.query.locale }, { all: false });
    const post = await pack.records.create(ctx.state.rc, 'cms', 'post', ctx.state.body, { locale });
    ctx.set('ETag', `"${post.version}"`);
    return post;
  });

  contentItemRoutes(router, pack, 'post', '/cms/posts/:postId', postResponse);
}

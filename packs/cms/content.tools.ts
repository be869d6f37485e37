import { NotFound, SchemaNotFound, type McpToolDefinition } from '../../core/pack-api.js';
import { contentItemResponse } from './cms-responses.js';
import { NON_CONTENT_TYPES, SLUG_PATTERN } from './content-type.js';

/** The CMS's MCP tools: published content by slug, for agents on /api/v1/mcp and on the public endpoint. */
export const contentTools: Record<string, McpToolDefinition> = {
  get_content: {
    title: 'Get published content',
    description: 'One published content item (a page, a post, or another content type) by its slug; drafts and archived items are not found.',
    public: true,
    input: {
      type: 'object', additionalProperties: false, required: ['contentType', 'slug'],
      properties: {
        contentType: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,39}$', description: 'page, post, or a content type of the tenant' },
        slug: { type: 'string', pattern: SLUG_PATTERN, maxLength: 200 },
      },
    },
    output: { type: 'object', required: ['item'], properties: { item: contentItemResponse } },
    handler: async (args: { contentType: string; slug: string }, { rc, pack }) => {
      if (NON_CONTENT_TYPES.has(args.contentType)) throw SchemaNotFound({ ns: 'cms', name: args.contentType });
      const filter = [{ field: 'status', value: 'published' }, { field: 'slug', value: args.slug }];
      const [item] = (await pack.records.list(rc, 'cms', args.contentType, { filter, limit: 1, count: false })).items;
      if (!item) throw NotFound(`No published ${args.contentType} with the slug "${args.slug}"`);
      return { item };
    },
  },
};

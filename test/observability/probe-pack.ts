import { definePack } from '../../core/kernel/define-pack.js';

/**
 * A pack only the observability tests load: routes with a wildcard and an optional segment (for the
 * OpenAPI paths) and one that fails with a cause (for the error log).
 */
const noteBody = {
  $id: 'https://schemas.example/probe/note',
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['text'],
  additionalProperties: false,
  properties: { text: { type: 'string' }, author: { $ref: '#/$defs/person' } },
  $defs: { person: { type: 'object', properties: { name: { type: 'string' } } } },
};

export const probePack = definePack({
  name: 'probe',
  routes(router) {
    router.get('/probe/files/*path', { summary: 'Echo a wildcard path', tags: ['probe'], auth: 'public' }, (ctx) => ({ path: ctx.params.path }));
    router.get('/probe/reports{/:year}', { summary: 'Reports, optionally of one year', tags: ['probe'], auth: 'public' }, (ctx) => ({ year: ctx.params.year ?? null }));
    router.post('/probe/notes', {
      summary: 'A body schema with $id and $defs, and a query schema', tags: ['probe'], auth: 'public', status: 201,
      body: noteBody,
      query: {
        type: 'object', required: ['mode'],
        properties: { mode: { type: 'string', enum: ['draft', 'final'], description: 'How to store it' }, meta: { type: 'object' } },
      },
      response: { type: 'object', properties: { text: { type: 'string' } } },
    }, (ctx) => ({ text: ctx.state.body.text }));
    router.post('/probe/blobs', {
      summary: 'A raw body', tags: ['probe'], auth: 'public', status: 201, body: 'raw',
    }, () => ({ stored: true }));
    router.get('/probe/boom', { summary: 'Fails with a cause', tags: ['probe'], auth: 'public' }, () => {
      throw new Error('probe handler failed', {
        cause: new Error('upstream refused https://bucket.s3.example/obj?X-Amz-Signature=deadbeefcafe&sig=feedface'),
      });
    });
  },
});

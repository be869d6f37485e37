import { definePack } from '../../core/kernel/define-pack.js';

/**
 * A pack only the observability tests load: routes with a wildcard and an optional segment (for the
 * OpenAPI paths) and one that fails with a cause (for the error log).
 */
export const probePack = definePack({
  name: 'probe',
  routes(router) {
    router.get('/probe/files/*path', { summary: 'Echo a wildcard path', tags: ['probe'], auth: 'public' }, (ctx) => ({ path: ctx.params.path }));
    router.get('/probe/reports{/:year}', { summary: 'Reports, optionally of one year', tags: ['probe'], auth: 'public' }, (ctx) => ({ year: ctx.params.year ?? null }));
    router.get('/probe/boom', { summary: 'Fails with a cause', tags: ['probe'], auth: 'public' }, () => {
      throw new Error('probe handler failed', {
        cause: new Error('upstream refused https://bucket.s3.example/obj?X-Amz-Signature=deadbeefcafe&sig=feedface'),
      });
    });
  },
});

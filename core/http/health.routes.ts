import type { PackRouter } from './route.js';
import { NotReady } from '../base/errors.js';

/** Liveness and readiness probes. */
export function healthRoutes(router: PackRouter, isReady: () => Promise<boolean>): void {
  router.get('/health', { summary: 'Liveness: 200 while the process runs', tags: ['operations'], auth: 'public' }, () => ({ status: 'ok' }));
  router.get('/ready', {
    summary: 'Readiness: 200 once the database answers and migrations are applied', tags: ['operations'], auth: 'public', errors: ['not_ready'],
  }, async () => {
    if (!(await isReady())) throw NotReady('The database is not reachable or not migrated');
    return { status: 'ready' };
  });
}

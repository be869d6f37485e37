import { prefetchFirstScreen } from './api/early.js';

/**
 * The entry: a few hundred bytes that start the first screen's API requests (a signed-in visit needs the
 * tenant's schemas, and on a records table its first page) while the browser fetches and parses the console
 * itself, instead of after it.
 */
prefetchFirstScreen();
void import('./start.js').then((m) => m.start());

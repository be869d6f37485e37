import type { AppContext } from '../http/app-state.js';

/**
 * Runs an upload that reads ctx.req. When it fails before the request body was read to its end
 * (413, a bad signature found late), the rest of the body is drained so the client can read the
 * answer, and the connection is closed after it.
 */
export async function releaseUpload<T>(ctx: AppContext, upload: () => Promise<T>): Promise<T> {
  try {
    return await upload();
  } catch (err) {
    if (!ctx.req.complete) {
      ctx.set('Connection', 'close');
      ctx.req.resume();
    }
    throw err;
  }
}

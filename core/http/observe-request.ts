import type { Next } from 'koa';
import { toAppError } from './error-handler.js';

/**
 * Runs the rest of the chain and then reports the status the request ends with: the response's, or the
 * one the error handler (further out) will render for an error under way. For middleware that runs
 * inside the error handler, such as the access log and the HTTP metrics.
 */
export async function observeRequest(ctx: { status: number }, next: Next, done: (status: number) => void): Promise<void> {
  let thrown: unknown;
  let failed = false;
  try {
    await next();
  } catch (err) {
    thrown = err;
    failed = true;
    throw err;
  } finally {
    done(failed ? toAppError(thrown).status : ctx.status);
  }
}

import { AsyncLocalStorage } from 'node:async_hooks';
import type { Middleware } from 'koa';

/**
 * A test hook (NODE_ENV=test only): the number of SQL statements a request ran, in the response header
 * X-Query-Count, so that tests can hold a read to a fixed number of queries (expansion, CONTRACT.md 12.2).
 * Outside tests no store exists and counting costs one undefined check per statement.
 */
let counter: AsyncLocalStorage<{ n: number }> | null = null;

/** Called by the dialects for every statement they run. */
export function countQuery(): void {
  const store = counter?.getStore();
  if (store) store.n++;
}

/** Runs fn outside the request being counted: background work a request merely woke (the outbox dispatcher). */
export function uncounted<T>(fn: () => T): T {
  return counter ? counter.exit(fn) : fn();
}

export function queryCountHeader(): Middleware {
  counter ??= new AsyncLocalStorage();
  const als = counter;
  return async function queryCountHeader(ctx, next) {
    const store = { n: 0 };
    await als.run(store, async () => {
      await next();
      ctx.set('X-Query-Count', String(store.n));
    });
  };
}

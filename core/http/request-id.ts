import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { AppState } from './app-state.js';
import { familyOf } from './envelope.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The first middleware: initialises ctx.state, takes a sane incoming X-Request-Id or makes one. */
export function requestId(): Middleware<AppState> {
  return async function requestId(ctx, next) {
    const incoming = ctx.get('X-Request-Id');
    const id = INCOMING_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = id;
    ctx.state.family = familyOf(ctx.path);
    ctx.state.startedAt = process.hrtime.bigint();
    ctx.set('X-Request-Id', id);
    await next();
  };
}

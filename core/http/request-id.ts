import { randomUUID } from 'node:crypto';
import type { AppContext } from './app-state.js';
import { familyOf } from './envelope.js';

const INCOMING_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/**
 * The first step of every request (core/http/request-pipeline.ts): initialises ctx.state, takes a sane
 * incoming X-Request-Id or makes one, and answers with it. Reads and writes the Node request and response
 * directly (Koa's ctx.get and ctx.set only add delegation and checks here).
 */
export function startRequest(ctx: AppContext): void {
  const incoming = ctx.req.headers['x-request-id'];
  const id = typeof incoming === 'string' && INCOMING_ID.test(incoming) ? incoming : randomUUID();
  const state = ctx.state;
  state.requestId = id;
  const path = ctx.path;
  state.path = path;
  state.family = familyOf(path);
  state.startedAt = process.hrtime.bigint();
  ctx.res.setHeader('X-Request-Id', id);
}

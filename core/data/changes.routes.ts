import { PassThrough } from 'node:stream';
import type { AppContext } from '../http/app-state.js';
import { ModuleDisabled, ValidationFailed } from '../base/errors.js';
import type { PackRouter } from '../http/route.js';
import { assertIdentifier, type SchemaRegistry } from '../metadata/schema-registry.js';
import type { TenantsService } from '../tenants/tenants.service.js';
import { IDENTIFIER } from '../metadata/schema-definition.js';
import { decodePosition, type ChangeStreams, type Subscriber } from '../events/change-stream.js';
import { target } from './data.routes.js';
import { readableRecord, restricted } from './record-policies.js';
import type { RecordsService } from './records.service.js';
import type { RequestContext } from '../base/request-context.js';

/**
 * A stream's view of record events under the caller's role policies: an event is sent when the caller may read the
 * record after the change (before it, for a delete), with readable fields only (`previous` null when it was not
 * readable). The policies are those of the roles as read at most 500 ms before each event (RolesService), so a role
 * change reaches an open stream within 1 s.
 */
function policyShape(rc: RequestContext, registry: SchemaRegistry, records: RecordsService): NonNullable<Subscriber['shape']> {
  return async (eventName, payload) => {
    const { namespace, schema: name, record, previous } = payload as { namespace: string; schema: string; record: Record<string, unknown>; previous: Record<string, unknown> | null };
    let access;
    try {
      access = await records.accessTo(rc, await registry.resolve(rc, namespace, name));
    } catch {
      return null;
    }
    if (!access) return payload;
    const deleted = eventName.endsWith('.deleted');
    const shown = readableRecord(access, deleted ? previous ?? record : record);
    if (!shown) return null;
    return { ...payload, record: deleted ? readableRecord(access, record) ?? shown : shown, previous: previous ? readableRecord(access, previous) : null };
  };
}

/** Bytes a stream may hold for a slow client before it is paused (then it catches up from the outbox). */
const STREAM_BUFFER = 64 * 1024;
/** Schemas one stream may follow. */
const MAX_SCHEMAS = 20;
const ACTIONS = ['created', 'updated', 'deleted'];

const NAME = IDENTIFIER.source.slice(1, -1);
/** `?schemas=ns.a,ns.b`: up to MAX_SCHEMAS names `<namespace>.<name>`. */
const SCHEMAS_QUERY = { type: 'string', maxLength: 2000, pattern: `^${NAME}\\.${NAME}(?:,${NAME}\\.${NAME}){0,${MAX_SCHEMAS - 1}}$` };

/**
 * Live changes over Server-Sent Events (CONTRACT.md 12.4): `GET /data/{ns}/{schema}/changes` and
 * `GET /changes?schemas=ns.a,ns.b`. Mounted before the record routes (`changes` is not a record id).
 */
export function changesRoutes(router: PackRouter, registry: SchemaRegistry, tenants: TenantsService, streams: ChangeStreams, records: RecordsService): void {
  const description = 'A Server-Sent Events stream of the tenant\'s created, updated and deleted events: `event: <name>`, `id: <position>`, '
    + '`data:` the delivery body `{ id, event, tenantId, product, occurredAt, payload }`. Positions grow in commit order; `Last-Event-ID` '
    + '(header or `?lastEventId=`) resumes after a position with nothing lost or repeated, from any event the outbox still holds. '
    + 'A comment line every 15 s keeps an idle stream open.';
  // A position is what encodePosition writes (decodePosition reads 1 to 38 digits; empty: from now on).
  const query = { type: 'object', properties: { lastEventId: { type: 'string', pattern: '^[0-9]{0,38}$' } } };

  router.get('/data/:ns/:schema/changes', {
    summary: 'Live changes of one schema (Server-Sent Events)', description, tags: ['data'], auth: 'tenant', policies: true,
    module: (ctx: AppContext) => registry.moduleOf(ctx.params.ns), produces: 'text/event-stream', query,
    errors: ['invalid_identifier', 'schema_not_found', 'module_disabled', 'validation_failed', 'headers_too_large'],
  }, async (ctx) => {
    const [ns, name] = target(ctx);
    await open(ctx, [[ns, name]]);
  });

  router.get('/changes', {
    summary: 'Live changes of several schemas (Server-Sent Events): ?schemas=ns.a,ns.b', description, tags: ['data'], auth: 'tenant', policies: true,
    module: null, produces: 'text/event-stream',
    query: { type: 'object', required: ['schemas'], properties: { ...query.properties, schemas: SCHEMAS_QUERY } },
    errors: ['invalid_identifier', 'schema_not_found', 'module_disabled', 'validation_failed', 'headers_too_large'],
  }, async (ctx) => {
    const names = String((ctx.state.query as { schemas: string }).schemas).split(',').map((s) => s.trim()).filter(Boolean);
    if (names.length > MAX_SCHEMAS) throw ValidationFailed(`At most ${MAX_SCHEMAS} schemas per stream`, [{ path: 'query/schemas', message: `must name at most ${MAX_SCHEMAS} schemas` }]);
    const targets = names.map((full) => {
      const [ns, name, ...rest] = full.split('.');
      if (!ns || !name || rest.length) throw ValidationFailed('schemas is a comma list of <namespace>.<name>', [{ path: 'query/schemas', message: `"${full.slice(0, 80)}" is not <namespace>.<name>` }]);
      assertIdentifier('namespace', ns);
      assertIdentifier('schema', name);
      return [ns, name] as const;
    });
    // The licensed module of every namespace named must be enabled for the tenant, as on /data routes.
    for (const module of new Set(targets.map(([ns]) => registry.moduleOf(ns)).filter((m): m is string => m !== null))) {
      const found = await tenants.lookup(ctx.state.rc, ctx.state.rc.tenantId!, module);
      if (!found?.moduleEnabled) throw ModuleDisabled(module);
    }
    await open(ctx, targets);
  });

  async function open(ctx: AppContext, targets: ReadonlyArray<readonly [string, string]>): Promise<void> {
    const rc = ctx.state.rc;
    // Each schema must be one the tenant, and the caller's role policies, can read (404 schema_not_found otherwise).
    for (const [ns, name] of targets) await records.accessTo(rc, await registry.resolve(rc, ns, name));
    const resumeFrom = ctx.get('Last-Event-ID') || (ctx.state.query as { lastEventId?: string }).lastEventId || '';
    const at = resumeFrom ? decodePosition(resumeFrom.trim()) : await streams.head(rc.tenantId!);
    if (!at) throw ValidationFailed('Last-Event-ID is not a position of this stream', [{ path: 'lastEventId', message: 'must be an event id of a change stream' }]);

    const socket = ctx.req.socket;
    socket.setTimeout(0);
    socket.setNoDelay(true);
    socket.setKeepAlive(true);
    const body = new PassThrough({ highWaterMark: STREAM_BUFFER });
    ctx.status = 200;
    ctx.type = 'text/event-stream';
    ctx.set('Cache-Control', 'no-cache, no-transform');
    ctx.set('X-Accel-Buffering', 'no');
    ctx.body = body;
    body.write('retry: 2000\n\n');
    const subscriber: Subscriber = {
      tenantId: rc.tenantId!,
      names: new Set(targets.flatMap(([ns, name]) => ACTIONS.map((a) => `${ns}.${name}.${a}`))),
      at,
      paused: false,
      send(frame) {
        if (body.destroyed || body.writableEnded) return;
        if (body.write(frame)) return;
        // The client's buffer is full: hold the stream at this position until it has read what it has.
        subscriber.paused = true;
        body.once('drain', () => streams.resume(subscriber));
      },
      heartbeat() {
        if (!subscriber.paused && !body.destroyed && !body.writableEnded) body.write(': keep-alive\n\n');
      },
      end() {
        if (!body.destroyed) body.end();
      },
      ...(restricted(rc) ? { shape: policyShape(rc, registry, records) } : {}),
    };
    body.once('close', () => streams.unsubscribe(subscriber));
    streams.subscribe(subscriber);
  }
}

import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/**
 * The skeleton of a new pack (npm run new-pack -- <name> [thing]): one namespace, one schema, a list and a
 * create endpoint, one filter hook, one event handler and a test that runs it through HTTP.
 */

export const PACK_NAME = /^[a-z][a-z0-9-]{1,38}[a-z0-9]$/;
export const THING_NAME = /^[a-z][a-z0-9_]{0,38}$/;

/** Words that cannot name the pack's import in config/packs.ts. */
const RESERVED_WORDS = new Set([
  'await', 'break', 'case', 'catch', 'class', 'const', 'continue', 'debugger', 'default', 'delete', 'do', 'else', 'enum',
  'export', 'extends', 'false', 'finally', 'for', 'function', 'if', 'implements', 'import', 'in', 'instanceof', 'interface',
  'let', 'new', 'null', 'package', 'packs', 'private', 'protected', 'public', 'return', 'static', 'super', 'switch', 'this',
  'throw', 'true', 'try', 'typeof', 'var', 'void', 'while', 'with', 'yield',
  // names the generated test uses itself
  'expect', 'as', 'tenant', 'events', 'other', 'createTenant', 'startTestApp',
]);

export interface ScaffoldOptions {
  /** The repository root to write into. */
  root: string;
  /** Pack name, kebab-case; the namespace is the name with `_` for `-`. */
  name: string;
  /** The schema's name, default `item`. */
  thing?: string;
}

export interface Scaffold {
  files: string[];
  /** The lines to add to config/packs.ts. */
  listing: { importLine: string; identifier: string };
  namespace: string;
  thing: string;
}

export function scaffoldNames(name: string, thing = 'item') {
  if (!PACK_NAME.test(name)) throw new Error(`The pack name "${name}" must be kebab-case: ${PACK_NAME.source}`);
  if (!THING_NAME.test(thing)) throw new Error(`The schema name "${thing}" must match ${THING_NAME.source}`);
  const namespace = name.replace(/-/g, '_');
  const camel = name.replace(/-([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  const identifier = RESERVED_WORDS.has(camel) ? `${camel}Pack` : camel;
  const route = `/${name}/${thing.replace(/_/g, '-')}s`;
  const title = thing.charAt(0).toUpperCase() + thing.slice(1).replace(/_/g, ' ');
  // "a book", "an account": by the first letter (an ample rule for schema names).
  const aThing = `${/^[aeiou]/.test(thing) ? 'an' : 'a'} ${thing}`;
  return { name, thing, namespace, identifier, route, title, aThing };
}

type Names = ReturnType<typeof scaffoldNames>;

/** Writes the three files; refuses to overwrite anything. */
export async function scaffoldPack(options: ScaffoldOptions): Promise<Scaffold> {
  const n = scaffoldNames(options.name, options.thing);
  const files: Record<string, string> = {
    [`packs/${n.name}/index.ts`]: packSource(n),
    [`schemas/${n.namespace}/${n.thing}.schema.json`]: `${JSON.stringify(schemaDefinition(n), null, 2)}\n`,
    [`test/packs/${n.name}/${n.name}.test.ts`]: testSource(n),
  };
  const taken = [`packs/${n.name}`, `schemas/${n.namespace}`, `test/packs/${n.name}`].filter((p) => existsSync(join(options.root, p)));
  if (taken.length) throw new Error(`Already there: ${taken.join(', ')}`);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(options.root, path)), { recursive: true });
    await writeFile(join(options.root, path), content, { flag: 'wx' });
  }
  return {
    files: Object.keys(files),
    listing: { importLine: `import ${n.identifier} from '../packs/${n.name}/index.js';`, identifier: n.identifier },
    namespace: n.namespace,
    thing: n.thing,
  };
}

function schemaDefinition(n: Names) {
  return {
    namespace: n.namespace,
    name: n.thing,
    title: n.title,
    description: `A ${n.title.toLowerCase()} of the ${n.name} pack.`,
    indexes: [['status']],
    schema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      required: ['title'],
      properties: {
        title: { type: 'string', minLength: 1, maxLength: 200 },
        status: { type: 'string', enum: ['open', 'done'], default: 'open' },
        notes: { type: 'string', maxLength: 20000 },
      },
    },
  };
}

function packSource(n: Names): string {
  return `import { definePack, listQuerySchema, pageResponse, queryFromString, recordResponse, ValidationFailed } from '../../core/pack-api.js';
import definition from '../../schemas/${n.namespace}/${n.thing}.schema.json' with { type: 'json' };

/** The ${n.name} pack: ${n.namespace}.${n.thing} records, listed and created at ${n.route}. */
export default definePack({
  name: '${n.name}',
  description: '${n.title}s',
  namespaces: [{ name: '${n.namespace}', open: false, schemas: ['${n.thing}'] }],

  // Filter hook: inside the write transaction (here and at /data/${n.namespace}/${n.thing}); may change or veto.
  hooks: {
    '${n.namespace}.${n.thing}.create': ({ data }) => {
      const title = String(data.title).trim();
      if (!title) throw ValidationFailed('The title is blank', [{ path: '/title', message: 'must not be blank' }]);
      return { ...data, title };
    },
  },

  // Event handler: after commit, at least once (through the outbox), so idempotent. Record events carry { record, previous }.
  on: {
    '${n.namespace}.${n.thing}.created': (event, pack) => {
      pack.logger.info({ tenantId: event.tenantId, id: event.payload.id }, '${n.thing} created');
    },
  },

  routes(router, pack) {
    router.get('${n.route}', {
      summary: 'List ${n.thing}s (the data API query language)', tags: ['${n.name}'], auth: 'tenant',
      query: listQuerySchema, response: pageResponse(recordResponse(definition)), errors: ['invalid_filter'],
    }, (ctx) => pack.records.list(ctx.state.rc, '${n.namespace}', '${n.thing}', queryFromString(ctx.query)));

    router.post('${n.route}', {
      summary: 'Create ${n.aThing}', tags: ['${n.name}'], auth: 'tenant', role: 'editor', status: 201, idempotent: true,
      body: definition.schema, response: recordResponse(definition), errors: ['validation_failed'],
    }, (ctx) => pack.records.create(ctx.state.rc, '${n.namespace}', '${n.thing}', ctx.state.body));
  },
});
`;
}

function testSource(n: Names): string {
  return `import { expect } from 'chai';
import { packs } from '../../../config/packs.js';
import ${n.identifier} from '../../../packs/${n.name}/index.js';
import type { PlatformEvent } from '../../../core/events/event.js';
import { createTenant, startTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

describe('${n.name} pack', () => {
  let t: TestApp;
  let tenant: string;
  const events: PlatformEvent[] = [];

  before(async () => {
    // Runs whether or not the pack is listed in config/packs.ts yet.
    t = await startTestApp({ packs: packs.some((p) => p.name === ${n.identifier}.name) ? packs : [...packs, ${n.identifier}] });
    t.app.kernel.events.on('${n.namespace}.${n.thing}.created', (event) => { events.push(event); });
  });
  after(() => t.close());
  beforeEach(async () => {
    tenant = await createTenant(t, '${n.namespace.slice(0, 12).replace(/_/g, '-')}');
  });

  describe('POST /api/v1${n.route}', () => {
    it('creates ${n.aThing}, trimmed by the hook, and publishes ${n.namespace}.${n.thing}.created', async () => {
      const res = await t.http.post('/api/v1${n.route}').set(as(tenant, 'editor')).send({ title: '  First  ' });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ title: 'First', status: 'open', version: 1 });
      expect(events.some((e) => e.tenantId === tenant && e.payload.id === res.body.data.id)).to.equal(true);
    });

    it('answers 400 validation_failed for a blank title', async () => {
      const res = await t.http.post('/api/v1${n.route}').set(as(tenant, 'editor')).send({ title: '   ' });
      expect(res.status).to.equal(400);
      expect(res.body.error.details).to.deep.equal([{ path: '/title', message: 'must not be blank' }]);
    });

    it('answers 403 forbidden to a viewer', async () => {
      const res = await t.http.post('/api/v1${n.route}').set(as(tenant, 'viewer')).send({ title: 'No' });
      expect(res.status).to.equal(403);
    });
  });

  describe('GET /api/v1${n.route}', () => {
    it('lists the tenant\\'s ${n.thing}s with the query language, including those written through /data', async () => {
      await t.http.post('/api/v1${n.route}').set(as(tenant, 'editor')).send({ title: 'Open one' }).expect(201);
      await t.http.post('/api/v1/data/${n.namespace}/${n.thing}').set(as(tenant, 'editor')).send({ title: 'Done one', status: 'done' }).expect(201);
      const other = await createTenant(t, 'other');
      await t.http.post('/api/v1${n.route}').set(as(other, 'editor')).send({ title: 'Not ours' }).expect(201);

      const res = await t.http.get('/api/v1${n.route}?filter[status]=done').set(as(tenant, 'viewer'));
      expect(res.status).to.equal(200);
      expect(res.body.data.items.map((i: { title: string }) => i.title)).to.deep.equal(['Done one']);
      expect(res.body.data.pagination.total).to.equal(1);
    });
  });
});
`;
}

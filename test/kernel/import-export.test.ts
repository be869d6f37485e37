import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { parse as parseCsv } from 'csv-parse/sync';
import { newId, nowIso } from '../../core/base/ids.js';
import { systemContext } from '../../core/base/request-context.js';
import { startServiceProcess } from '../helpers/service-process.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const itemSchema = {
  namespace: 'io',
  name: 'item',
  schema: {
    type: 'object',
    required: ['title'],
    properties: {
      title: { type: 'string', minLength: 1 },
      sku: { type: 'string' },
      price: { type: 'integer', minimum: 0 },
      live: { type: 'boolean' },
      dims: { type: 'object', properties: { w: { type: 'number' } } },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  indexes: [['price']],
  unique: [['sku']],
};

const IMPORT_MAX_BYTES = 200_000;

/** supertest parser keeping a streamed body as text. */
function asText(res: import('superagent').Response, callback: (err: Error | null, body: string) => void): void {
  const stream = res as unknown as NodeJS.ReadableStream;
  let text = '';
  stream.on('data', (c: Buffer) => { text += c.toString(); });
  stream.on('end', () => callback(null, text));
}

describe('export and import: /api/v1/data/:ns/:schema/export|import', () => {
  let t: TestApp;
  let tenant: string;
  const path = '/api/v1/data/io/item';

  before(async () => {
    t = await startTestApp({ env: { IMPORT_MAX_BYTES: String(IMPORT_MAX_BYTES) } });
  });
  after(() => t?.close());
  beforeEach(async () => {
    tenant = await createTenant(t, 'io');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(itemSchema).expect(201);
  });

  const list = async (query = '') => (await t.http.get(`${path}?limit=200${query}`).set(as(tenant, 'viewer')).expect(200)).body.data;
  const importBody = (query: string, body: string, role: 'editor' | 'viewer' = 'editor') => t.http.post(`${path}/import${query}`)
    .set(as(tenant, role)).set('Content-Type', query.includes('csv') ? 'text/csv' : 'application/x-ndjson').send(body);

  it('exports every record matching the filters and sort, as NDJSON and CSV', async () => {
    const items = Array.from({ length: 30 }, (_, i) => ({ title: `item, "${i}"`, sku: `s${i}`, price: i, live: i % 2 === 0, dims: { w: i / 2 }, tags: ['a', `t${i}`] }));
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    const expected = (await list('&filter[price][gte]=5&sort=-price')).items;
    expect(expected).to.have.length(25);

    const nd = await t.http.get(`${path}/export?filter[price][gte]=5&sort=-price&limit=3`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
    expect(nd.headers['content-type']).to.match(/^application\/x-ndjson/);
    const lines = (nd.body as string).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).to.deep.equal(expected);

    const csv = await t.http.get(`${path}/export?format=csv&filter[price][gte]=5&sort=-price`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
    expect(csv.headers['content-type']).to.match(/^text\/csv/);
    const text = csv.body as string;
    expect(text.split('\n')[0]).to.equal('id,title,sku,price,live,dims,tags,createdAt,updatedAt,version');
    const rows = parseCsv(text, { columns: true }) as Array<Record<string, string>>;
    expect(rows).to.have.length(25);
    expect(rows[0]).to.deep.equal({
      id: expected[0].id, title: 'item, "29"', sku: 's29', price: '29', live: 'false', dims: '{"w":14.5}', tags: '["a","t29"]',
      createdAt: expected[0].createdAt, updatedAt: expected[0].updatedAt, version: '1',
    });
  });

  it('writes each record as the list gives it, byte for byte, across pages and with awkward values', async function () {
    this.timeout(60_000);
    // Fields of every kind, no types: whatever JSON the bulk write stores, the export must write as the list does.
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'io', name: 'odd', schema: { type: 'object', properties: { rank: { type: 'integer' }, note: {} } }, indexes: [['rank']],
    }).expect(201);
    const odd = '/api/v1/data/io/odd';
    // As JSON text (String.raw: the escapes are the JSON's), so that 1.0 or 1e20 reach the service as written.
    const awkward = [
      String.raw`{"note":"plain"}`,
      String.raw`{"note":"caf\u00e9 é 日本 \ud83d\ude00 😀 \u00ff","rank":1}`,
      String.raw`{"note":"quote \" backslash \\ slash \/ </script> \\n not a newline","rank":2}`,
      String.raw`{"note":"new\nline, tab\t, cr\r, ctrl \u0001 \u001f, del \u007f, bs \b ff \f, ls \u2028","rank":3}`,
      String.raw`{"note":{"nested":{"deep":[1,{"x":null}],"empty":{}},"list":[]},"rank":4}`,
      String.raw`{"note":[1.0,1e20,-0,0.1,1.5e-7,123456789012345678901234567890,-2.5E+3],"rank":5}`,
      String.raw`{"note":null,"z":true,"a":false,"mm":"key order"}`,
      String.raw`{"note":"","rank":0,"":"empty key","k\"ey":"quoted key"}`,
      String.raw`{}`,
    ];
    await t.http.post(`${odd}/bulk`).set(as(tenant, 'editor')).set('Content-Type', 'application/json')
      .send(`{"items":[${awkward.join(',')}]}`).expect(201);
    // Two and a half export pages, sorted on a field with ties and absent values, so that pages end
    // inside runs of equal values and of nulls.
    for (let from = 0; from < 2400; from += 800) {
      const items = Array.from({ length: 800 }, (_, i) => ((from + i) % 11 === 0 ? { note: `n${from + i}` } : { note: `n${from + i}`, rank: (from + i) % 5 }));
      await t.http.post(`${odd}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    }
    /** The list's items as their JSON texts, exactly as the list answers them, every page followed. */
    const listed = async (query: string): Promise<string> => {
      const texts: string[] = [];
      let cursor = '';
      for (;;) {
        const res = await t.http.get(`${odd}?limit=200${query}${cursor}`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
        const body = res.body as string;
        const items = body.slice(body.indexOf('"items":') + '"items":'.length, body.lastIndexOf(',"pagination":'));
        if (items !== '[]') texts.push(items.slice(1, -1));
        const next = JSON.parse(body).data.pagination.nextCursor as string | null;
        if (!next) return texts.join(',');
        cursor = `&cursor=${encodeURIComponent(next)}`;
      }
    };
    const exported = async (query: string): Promise<string> => {
      const res = await t.http.get(`${odd}/export?${query}`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
      const body = res.body as string;
      expect(body.endsWith('\n')).to.equal(true);
      return body.slice(0, -1).split('\n').join(',');
    };
    for (const query of ['', '&sort=rank', '&sort=-rank,createdAt', '&filter[rank][gte]=2&sort=rank', '&filter[rank][in]=1,3,4,5']) {
      const fromList = await listed(query);
      expect(await exported(query.slice(1)), query).to.equal(fromList);
      if (query === '') expect(fromList.split('{"id":').length - 1).to.equal(2409);
    }
    // The awkward documents were stored as JSON (the unicode and the escapes as JSON text reads them).
    const back = JSON.parse(`[${await exported('')}]`) as Array<Record<string, unknown>>;
    const note = (start: string) => back.find((r) => typeof r.note === 'string' && r.note.startsWith(start))?.note;
    expect(note('caf')).to.equal('caf\u00e9 \u00e9 \u65e5\u672c \ud83d\ude00 \ud83d\ude00 \u00ff');
    expect(note('new')).to.equal('new\nline, tab\t, cr\r, ctrl \u0001 \u001f, del \u007f, bs \b ff \f, ls \u2028');
  });

  it('writes CSV as csv-stringify does, byte for byte, across pages and with awkward values', async function () {
    this.timeout(60_000);
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'io', name: 'cells', schema: { type: 'object', properties: {
        kind: { type: 'string' }, rank: { type: 'integer' }, note: {}, flag: { type: 'boolean' }, amount: { type: 'number' },
      } }, indexes: [['rank']],
    }).expect(201);
    const cells = '/api/v1/data/io/cells';
    // As JSON text (String.raw: the escapes are the JSON's), so that 1.0 or 1e20 reach the service as written;
    // object keys in PostgreSQL's jsonb order (shorter first), so that one text serves both engines.
    const awkward = [
      String.raw`{"kind":"odd","rank":1,"note":"plain","flag":true,"amount":1.0}`,
      String.raw`{"kind":"odd","rank":2,"note":"comma, \"quotes\" and ''","flag":false,"amount":-0}`,
      String.raw`{"kind":"odd","rank":3,"note":"new\nline, cr\r\n, tab\t, ctrl \u0001","amount":1e20}`,
      String.raw`{"kind":"odd","rank":4,"note":"caf\u00e9 日本 \ud83d\ude00 \u2028","amount":0.1}`,
      String.raw`{"kind":"odd","rank":5,"note":{"a":{"b":[1,{"x":null}],"q":"a\"b,c"},"cc":[]},"amount":1.5e-7}`,
      String.raw`{"kind":"odd","rank":6,"note":[1.0,"two",false,null],"amount":123456789012345678901234567890}`,
      String.raw`{"kind":"odd","rank":7,"note":null,"amount":-2.5E+3}`,
      String.raw`{"kind":"odd","rank":8,"note":"","extra":"not a column"}`,
      String.raw`{"kind":"odd","rank":9,"note":" lead and trail ","amount":42}`,
      String.raw`{"kind":"odd","rank":10,"note":true}`,
      String.raw`{"kind":"odd","rank":11,"note":0}`,
    ];
    await t.http.post(`${cells}/bulk`).set(as(tenant, 'editor')).set('Content-Type', 'application/json')
      .send(`{"items":[${awkward.join(',')}]}`).expect(201);
    const exported = async (query: string): Promise<string> => {
      const res = await t.http.get(`${cells}/export?format=csv${query}`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
      return res.body as string;
    };
    // What the export wrote before it read rows one by one (a Stringifier stream fed one row at a time), exactly.
    const odd = (await t.http.get(`${cells}?filter[kind]=odd&sort=rank&limit=20`).set(as(tenant, 'viewer')).expect(200)).body.data.items as Array<Record<string, string>>;
    const at = (i: number) => `${odd[i].id},`;
    const times = (i: number) => `,${odd[i].createdAt},${odd[i].updatedAt},1`;
    expect(await exported('&filter[kind]=odd&sort=rank')).to.equal([
      'id,kind,rank,note,flag,amount,createdAt,updatedAt,version',
      `${at(0)}odd,1,plain,true,1${times(0)}`,
      `${at(1)}odd,2,"comma, ""quotes"" and ''",false,0${times(1)}`,
      `${at(2)}odd,3,"new\nline, cr\r\n, tab\t, ctrl \u0001",,100000000000000000000${times(2)}`,
      `${at(3)}odd,4,caf\u00e9 日本 \ud83d\ude00 \u2028,,0.1${times(3)}`,
      `${at(4)}odd,5,"{""a"":{""b"":[1,{""x"":null}],""q"":""a\\""b,c""},""cc"":[]}",,1.5e-7${times(4)}`,
      `${at(5)}odd,6,"[1,""two"",false,null]",,1.2345678901234568e+29${times(5)}`,
      `${at(6)}odd,7,,,-2500${times(6)}`,
      `${at(7)}odd,8,,,${times(7)}`,
      `${at(8)}odd,9, lead and trail ,,42${times(8)}`,
      `${at(9)}odd,10,true,,${times(9)}`,
      `${at(10)}odd,11,0,,${times(10)}`,
      '',
    ].join('\n'));
    // Nothing matching: the header alone.
    expect(await exported('&filter[kind]=none')).to.equal('id,kind,rank,note,flag,amount,createdAt,updatedAt,version\n');

    // Nearly ten CSV export pages (250 rows), sorted on a field with ties and absent values: each row's cells
    // are the list's record's values (objects as JSON text, absent and null empty), for its filters and sort.
    for (let from = 0; from < 2400; from += 800) {
      const items = Array.from({ length: 800 }, (_, i) => {
        const n = from + i;
        return { kind: 'bulk', note: n % 4 === 0 ? { n, s: `x,"${n}"` } : `n${n}${n % 3 === 0 ? '\n"q"' : ''}`, flag: n % 2 === 0, ...(n % 11 ? { rank: n % 5, amount: n / 8 } : {}) };
      });
      await t.http.post(`${cells}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    }
    const listed = async (query: string): Promise<Array<Record<string, unknown>>> => {
      const items: Array<Record<string, unknown>> = [];
      let cursor = '';
      for (;;) {
        const page = (await t.http.get(`${cells}?limit=200${query}${cursor}`).set(as(tenant, 'viewer')).expect(200)).body.data;
        items.push(...page.items);
        if (!page.pagination.nextCursor) return items;
        cursor = `&cursor=${encodeURIComponent(page.pagination.nextCursor)}`;
      }
    };
    const columns = ['id', 'kind', 'rank', 'note', 'flag', 'amount', 'createdAt', 'updatedAt', 'version'];
    const cell = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
    for (const query of ['', '&sort=rank', '&sort=-rank,createdAt', '&filter[rank][gte]=2&sort=rank', '&filter[kind]=bulk&filter[rank][in]=1,3']) {
      const rows = parseCsv(await exported(query), { columns: true }) as Array<Record<string, string>>;
      const expected = (await listed(query)).map((r) => Object.fromEntries(columns.map((c) => [c, cell(r[c])])));
      if (query === '') expect(expected).to.have.length(2411);
      expect(rows, query).to.deep.equal(expected);
    }
  });

  it('refuses a bad format or filter, and a viewer importing', async () => {
    await t.http.get(`${path}/export?format=xml`).set(as(tenant, 'viewer')).expect(400);
    const bad = await t.http.get(`${path}/export?filter[nope]=1`).set(as(tenant, 'viewer')).expect(400);
    expect(bad.body.data.code).to.equal('invalid_filter');
    await t.http.get('/api/v1/data/io/nope/export').set(as(tenant, 'viewer')).expect(404);
    await importBody('', '{"title":"a"}\n', 'viewer').expect(403);
  });

  it('imports NDJSON line by line, counting and naming the lines that fail', async () => {
    const body = [
      '{"title":"one","sku":"a","price":1}',
      '{"title":"two","price":"x"}',
      '',
      'not json',
      '{"title":"three","id":"ignored","version":9}',
      '[1,2]',
      '{"title":""}',
    ].join('\n');
    const res = await importBody('', body).expect(200);
    expect(res.body.status).to.equal('success');
    expect(res.body.data).to.include({ created: 2, updated: 0, failed: 4 });
    const errors = res.body.data.errors as Array<{ line: number; path: string; message: string }>;
    expect(errors.map((e) => [e.line, e.path])).to.deep.equal([[2, '/price'], [3, '/'], [5, '/'], [6, '/title']]);
    const stored = (await list('&sort=title')).items;
    expect(stored.map((r: { title: string }) => r.title)).to.deep.equal(['one', 'three']);
    expect(stored[1].version).to.equal(1);
  });

  it('imports CSV with values typed by the schema, the header not counted', async () => {
    const body = [
      'title,sku,price,live,dims,tags',
      'Chair,c1,1200,true,"{""w"":40.5}","[""wood""]"',
      '"Desk, large",c2,,false,,',
      'Lamp,c3,cheap,true,,',
    ].join('\r\n');
    const res = await importBody('?format=csv', body).expect(200);
    expect(res.body.data).to.include({ created: 2, failed: 1 });
    expect(res.body.data.errors).to.deep.equal([{ line: 3, path: '/price', message: 'must be integer', code: 'validation_failed' }]);
    const stored = (await list('&sort=sku')).items;
    expect(stored[0]).to.include({ title: 'Chair', sku: 'c1', price: 1200, live: true });
    expect(stored[0].dims).to.deep.equal({ w: 40.5 });
    expect(stored[0].tags).to.deep.equal(['wood']);
    expect(stored[1]).to.include({ title: 'Desk, large', live: false });
    expect(stored[1]).to.not.have.property('price');
  });

  it('upserts on a unique field, and reports a taken unique value on its line', async () => {
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items: [{ title: 'old', sku: 'a', price: 1 }] }).expect(201);
    const upserted = await importBody('?upsert=sku', '{"sku":"a","price":5}\n{"title":"new","sku":"b"}\n{"sku":"b","price":7}\n').expect(200);
    expect(upserted.body.data).to.include({ created: 1, updated: 2, failed: 0 });
    const stored = (await list('&sort=sku')).items;
    expect(stored.map((r: { sku: string; price?: number; version: number }) => [r.sku, r.price, r.version])).to.deep.equal([['a', 5, 2], ['b', 7, 2]]);
    const taken = await importBody('', '{"title":"x","sku":"z"}\n{"title":"y","sku":"a"}\n{"title":"w"}\n').expect(200);
    expect(taken.body.data).to.include({ created: 2, failed: 1 });
    expect(taken.body.data.errors[0].line).to.equal(2);
    expect(taken.body.data.errors[0].code).to.equal('conflict');
  });

  it('atomic: nothing is written when a line fails (400 with the errors), all when none does', async () => {
    const failing = await importBody('?atomic=true', '{"title":"a"}\n{"title":""}\n{"title":"c"}\n').expect(400);
    expect(failing.body.status).to.equal('fail');
    expect(failing.body.data.code).to.equal('validation_failed');
    expect(failing.body.data.errors).to.deep.equal([{ line: 2, path: '/title', message: 'must NOT have fewer than 1 characters', code: 'validation_failed' }]);
    const lines = Array.from({ length: 2500 }, (_, i) => JSON.stringify({ title: `t${i}`, sku: `k${i}` }));
    const late = await importBody('?atomic=true', [...lines, '{"title":"dup","sku":"k3"}'].join('\n')).expect(400);
    expect(late.body.data.errors[0].line).to.be.at.least(2001);
    expect((await list()).pagination.total).to.equal(0);
    const ok = await importBody('?atomic=true', lines.join('\n')).expect(200);
    expect(ok.body.data).to.include({ created: 2500, failed: 0 });
    expect((await list()).pagination.total).to.equal(2500);
  });

  it('refuses a body over IMPORT_MAX_BYTES with 413', async () => {
    const line = JSON.stringify({ title: 'x'.repeat(200) });
    const body = Array.from({ length: Math.ceil(IMPORT_MAX_BYTES / line.length) + 10 }, () => line).join('\n');
    const res = await importBody('', body).expect(413);
    expect(res.body.data.code).to.equal('payload_too_large');
  });

  it('a CSV export imports back into another tenant', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ title: `r${i}`, sku: `s${i}`, price: i, dims: { w: i }, tags: [`x${i}`] }));
    await t.http.post(`${path}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    const csv = await t.http.get(`${path}/export?format=csv&sort=sku`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
    const other = await createTenant(t, 'io');
    await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send(itemSchema).expect(201);
    const res = await t.http.post(`${path}/import?format=csv`).set(as(other, 'editor')).set('Content-Type', 'text/csv').send(csv.body as string).expect(200);
    expect(res.body.data).to.include({ created: 40, failed: 0 });
    const strip = (r: Record<string, unknown>) => ({ title: r.title, sku: r.sku, price: r.price, dims: r.dims, tags: r.tags });
    const mine = (await list('&sort=sku')).items.map(strip);
    const theirs = (await t.http.get(`${path}?limit=200&sort=sku`).set(as(other, 'viewer')).expect(200)).body.data.items.map(strip);
    expect(theirs).to.deep.equal(mine);
  });

  it('applies the input hygiene to every imported line: deep nesting, NUL and lone surrogates fail their line, never stored (#34)', async () => {
    const deep = `{"title":"deep","dims":${'{"w":'.repeat(5000)}1${'}'.repeat(5000)}}`;
    const body = [
      '{"title":"first"}',
      deep,
      String.raw`{"title":"nul \u0000 inside"}`,
      String.raw`{"title":"lone \ud800 surrogate"}`,
      String.raw`{"title":"key","tags":["ok"],"dims":{"w\u0000":1}}`,
      String.raw`{"title":"pair \ud83d\ude00 is fine"}`,
      `[${'['.repeat(70)}${']'.repeat(70)}]`,
    ].join('\n');
    const res = await importBody('', body).expect(200);
    expect(res.body.data).to.include({ created: 2, updated: 0, failed: 5 });
    const errors = res.body.data.errors as Array<{ line: number; path: string; message: string; code: string }>;
    expect(errors.map((e) => [e.line, e.path, e.code])).to.deep.equal([
      [2, '/', 'invalid_json'], [3, '/title', 'validation_failed'], [4, '/title', 'validation_failed'],
      [5, '/dims/w\uFFFD', 'validation_failed'], [7, '/', 'invalid_json'],
    ]);
    expect(errors[0].message).to.match(/deeper than 64/);
    expect(errors[1].message).to.match(/NUL character or a lone surrogate/);
    expect((await list('&sort=title')).items.map((r: { title: string }) => r.title)).to.deep.equal(['first', 'pair \ud83d\ude00 is fine']);

    // CSV: a NUL in a cell or a column name, and a JSON cell nested too deep.
    const csv = [
      'title,sku,dims',
      'csv ok,c1,',
      'nul\u0000cell,c2,',
      `deep cell,c3,"${'{""w"":'.repeat(100)}1${'}'.repeat(100)}"`,
      'also ok,c4,"{""w"":2}"',
    ].join('\n');
    const fromCsv = await importBody('?format=csv', csv).expect(200);
    expect(fromCsv.body.data).to.include({ created: 2, failed: 2 });
    expect(fromCsv.body.data.errors.map((e: { line: number; path: string; code: string }) => [e.line, e.path, e.code])).to.deep.equal([
      [2, '/title', 'validation_failed'], [3, '/dims', 'invalid_json'],
    ]);
    const badHeader = await importBody('?format=csv', 'title,no\u0000te\nx,y\n').expect(200);
    expect(badHeader.body.data).to.include({ created: 0, failed: 1 });
    expect(badHeader.body.data.errors[0]).to.include({ line: 1, path: '/no\uFFFDte', code: 'validation_failed' });

    // Atomic: the same lines refuse the whole import with their codes, nothing written.
    const atomic = await importBody('?atomic=true', ['{"title":"would be"}', deep].join('\n')).expect(400);
    expect(atomic.body.data.errors).to.deep.equal([{ line: 2, path: '/', message: 'The line nests deeper than 64 levels', code: 'invalid_json' }]);
    expect((await list()).pagination.total).to.equal(4);
  });

  it('writes a CSV cell whose text starts like a formula with a leading quote, numbers as they are, and imports it back (#34)', async () => {
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'io', name: 'sheet', schema: { type: 'object', properties: { rank: { type: 'integer' }, text: { type: 'string' }, amount: { type: 'number' }, any: {} } },
    }).expect(201);
    const sheet = '/api/v1/data/io/sheet';
    const texts = ['=HYPERLINK("http://evil.example","x")', '-2+3', '+1', '@SUM(A1:A2)', '\tlead tab', '\rcr first', '\'=already', '\'plain quote', '\'', 'plain', 'a=b', '-', ''];
    const items = texts.map((text, rank) => ({ rank, text, amount: -rank - 0.5, any: rank % 2 ? `=${rank}` : -rank }));
    await t.http.post(`${sheet}/bulk`).set(as(tenant, 'editor')).send({ items }).expect(201);
    const res = await t.http.get(`${sheet}/export?format=csv&sort=rank`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
    const rows = parseCsv(res.body as string, { columns: true }) as Array<Record<string, string>>;
    expect(rows.map((r) => r.text)).to.deep.equal([
      '\'=HYPERLINK("http://evil.example","x")', '\'-2+3', '\'+1', '\'@SUM(A1:A2)', '\'\tlead tab', '\'\rcr first', '\'\'=already', '\'plain quote', '\'', 'plain', 'a=b', '\'-', '',
    ]);
    // Numbers stay numbers (a spreadsheet opens -0.5 as a number); a string field of an untyped column is quoted.
    expect(rows.map((r) => r.amount).slice(0, 3)).to.deep.equal(['-0.5', '-1.5', '-2.5']);
    expect(rows.map((r) => r.any).slice(0, 4)).to.deep.equal(['0', '\'=1', '-2', '\'=3']);
    // NDJSON is unchanged.
    const nd = await t.http.get(`${sheet}/export?sort=rank`).set(as(tenant, 'viewer')).buffer(true).parse(asText).expect(200);
    expect((nd.body as string).trim().split('\n').map((l) => JSON.parse(l).text)).to.deep.equal(texts);
    // Imported back, the values are the ones exported (empty text is an absent cell).
    const other = await createTenant(t, 'io');
    await t.http.post('/api/v1/metadata/schemas').set(as(other, 'admin')).send({
      namespace: 'io', name: 'sheet', schema: { type: 'object', properties: { rank: { type: 'integer' }, text: { type: 'string' }, amount: { type: 'number' }, any: {} } },
    }).expect(201);
    const back = await t.http.post(`${sheet}/import?format=csv`).set(as(other, 'editor')).set('Content-Type', 'text/csv').send(res.body as string).expect(200);
    expect(back.body.data).to.include({ created: texts.length, failed: 0 });
    const theirs = (await t.http.get(`${sheet}?sort=rank&limit=50`).set(as(other, 'viewer')).expect(200)).body.data.items as Array<Record<string, unknown>>;
    expect(theirs.map((r) => r.text ?? '')).to.deep.equal(texts);
    expect(theirs.map((r) => r.amount)).to.deep.equal(items.map((i) => i.amount));
  });

  it('exports 100,000 records with the service process\'s memory flat, as NDJSON and as CSV', async function () {
    this.timeout(240_000);
    const rc = systemContext(tenant);
    const schema = await t.app.kernel.schemas.resolve(rc, 'io', 'item');
    const now = nowIso();
    const filler = 'x'.repeat(400);
    for (let from = 0; from < 100_000; from += 10_000) {
      const records = Array.from({ length: 10_000 }, (_, i) => ({ id: newId(), title: `${filler}${from + i}`, price: from + i, createdAt: now, updatedAt: now, version: 1 }));
      await t.app.kernel.db.transaction(rc, (trx) => t.app.kernel.records.repository.bulkInsert(trx, schema, records));
    }
    // A heap capped at 80 MB: an export that held the records (about 45 MB of text, several times that as
    // objects) would run out of memory; one that streams them does not notice.
    const service = await startServiceProcess(t.database.url, { NODE_OPTIONS: '--max-old-space-size=80' });
    try {
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${service.child.pid}/status`, 'utf8'))![1]) * 1024;
      // Warm up (code paths, pools), then measure from a settled baseline.
      await (await fetch(`${service.baseUrl}${path}/export?filter[price][lt]=2000`, { headers: as(tenant, 'viewer') })).text();
      const baseline = rss();
      let peak = baseline;
      const sampler = setInterval(() => { peak = Math.max(peak, rss()); }, 25);
      let bytes = 0;
      let lines = 0;
      try {
        const res = await fetch(`${service.baseUrl}${path}/export`, { headers: as(tenant, 'viewer') });
        expect(res.status).to.equal(200);
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          bytes += chunk.length;
          for (const b of chunk) if (b === 10) lines += 1;
        }
      } finally {
        clearInterval(sampler);
      }
      expect(lines).to.equal(100_000);
      // About 45 MB of records went through; the process grew by a small, fixed amount.
      expect(bytes).to.be.greaterThan(40_000_000);
      console.log(`      export of 100,000 records: ${(bytes / 1e6).toFixed(1)} MB sent, RSS ${(baseline / 2 ** 20).toFixed(0)} MiB before, growth ${((peak - baseline) / 2 ** 20).toFixed(1)} MiB`);
      expect(peak - baseline, `baseline ${baseline}, peak ${peak}`).to.be.lessThan(60 * 1024 * 1024);

      // The same records as CSV.
      peak = rss();
      const csvBaseline = peak;
      const csvSampler = setInterval(() => { peak = Math.max(peak, rss()); }, 25);
      lines = 0;
      try {
        const res = await fetch(`${service.baseUrl}${path}/export?format=csv`, { headers: as(tenant, 'viewer') });
        expect(res.status).to.equal(200);
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) for (const b of chunk) if (b === 10) lines += 1;
      } finally {
        clearInterval(csvSampler);
      }
      expect(lines).to.equal(100_001);
      console.log(`      CSV export of 100,000 records: RSS ${(csvBaseline / 2 ** 20).toFixed(0)} MiB before, growth ${((peak - csvBaseline) / 2 ** 20).toFixed(1)} MiB`);
      expect(peak - csvBaseline, `baseline ${csvBaseline}, peak ${peak}`).to.be.lessThan(60 * 1024 * 1024);
    } finally {
      service.kill('SIGTERM');
      await service.exited;
    }
  });
});

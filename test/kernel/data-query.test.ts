import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

const itemSchema = {
  namespace: 'qry',
  name: 'item',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: 'string' },
      qty: { type: 'integer' },
      price: { type: 'number' },
      active: { type: 'boolean' },
      tag: { type: ['string', 'null'] },
      grp: { type: 'integer' },
      label: { type: 'string' },
      meta: { type: 'object' },
      tags: { type: 'array', items: { type: 'string' } },
    },
  },
  indexes: [['qty'], ['grp', 'label']],
};

type Item = Record<string, any>;

const seed: Item[] = [
  { name: 'Apple', qty: 5, price: 1.5, active: true, tag: 'fruit', meta: { origin: 'de' } },
  { name: 'apricot', qty: 12, price: 2.25, active: false, tag: 'fruit' },
  { name: 'Banana_split', qty: 0, price: 4, active: true, tag: null },
  { name: 'Cherry', qty: -3, price: 0.1, active: false },
  { name: 'Date 100%', qty: 12, price: 10, active: true, tag: 'dried', tags: ['sweet'] },
];

describe('GET /api/v1/data/:ns/:schema (query language)', () => {
  let t: TestApp;
  let tenant: string;
  let ids: Record<string, string>;

  before(async () => {
    t = await sharedTestApp();
    tenant = await createTenant(t, 'qry');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(itemSchema).expect(201);
    ids = {};
    for (const item of seed) {
      const res = await t.http.post('/api/v1/data/qry/item').set(as(tenant, 'editor')).send(item);
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      ids[item.name] = res.body.data.item.id;
    }
  });

  const list = (query: Record<string, string | number>) => t.http.get('/api/v1/data/qry/item').query(query).set(as(tenant, 'viewer'));
  const names = async (query: Record<string, string | number>) => {
    const res = await list(query);
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items.map((i: Item) => i.name).sort();
  };
  const invalidFilter = async (query: Record<string, string | number>) => {
    const res = await list(query);
    expect(res.status, JSON.stringify(query)).to.equal(400);
    expect(res.body.status).to.equal('fail');
    expect(res.body.data.code, JSON.stringify(query)).to.equal('invalid_filter');
    return res;
  };

  it('lists newest first by default with pagination', async () => {
    const res = await list({});
    expect(res.body.data.items.map((i: Item) => i.name)).to.deep.equal(seed.map((s) => s.name).reverse());
    expect(res.body.data.pagination).to.deep.equal({ limit: 50, offset: 0, total: 5, totalEstimated: false, hasMore: false, nextCursor: null });
  });

  it('filters strings with eq (implicit and explicit), ne, in, nin', async () => {
    expect(await names({ 'filter[name]': 'Apple' })).to.deep.equal(['Apple']);
    expect(await names({ 'filter[name][eq]': 'Cherry' })).to.deep.equal(['Cherry']);
    expect(await names({ 'filter[tag][ne]': 'fruit' })).to.deep.equal(['Banana_split', 'Cherry', 'Date 100%']);
    expect(await names({ 'filter[tag][in]': 'fruit,dried' })).to.deep.equal(['Apple', 'Date 100%', 'apricot']);
    expect(await names({ 'filter[tag][nin]': 'fruit' })).to.deep.equal(['Banana_split', 'Cherry', 'Date 100%']);
  });

  it('filters strings with gt, gte, lt, lte', async () => {
    expect(await names({ 'filter[name][gte]': 'Banana', 'filter[name][lt]': 'D' })).to.deep.equal(['Banana_split', 'Cherry']);
    expect(await names({ 'filter[tag][gt]': 'dried' })).to.deep.equal(['Apple', 'apricot']);
    expect(await names({ 'filter[tag][lte]': 'dried' })).to.deep.equal(['Date 100%']);
  });

  it('filters with like: % is the wildcard, case-insensitive, _ and % in values are literal', async () => {
    expect(await names({ 'filter[name][like]': 'ap%' })).to.deep.equal(['Apple', 'apricot']);
    expect(await names({ 'filter[name][like]': '%_split' })).to.deep.equal(['Banana_split']);
    expect(await names({ 'filter[name][like]': 'Banana_%' })).to.deep.equal(['Banana_split']);
    expect(await names({ 'filter[name][like]': 'Appl_' })).to.deep.equal([]);
    expect(await names({ 'filter[name][like]': '%CHERRY%' })).to.deep.equal(['Cherry']);
  });

  it('filters integers and numbers with typed comparisons', async () => {
    expect(await names({ 'filter[qty]': '12' })).to.deep.equal(['Date 100%', 'apricot']);
    expect(await names({ 'filter[qty][gt]': '0' })).to.deep.equal(['Apple', 'Date 100%', 'apricot']);
    expect(await names({ 'filter[qty][gte]': '0', 'filter[qty][lt]': '12' })).to.deep.equal(['Apple', 'Banana_split']);
    expect(await names({ 'filter[qty][lte]': '-3' })).to.deep.equal(['Cherry']);
    expect(await names({ 'filter[qty][ne]': '12' })).to.deep.equal(['Apple', 'Banana_split', 'Cherry']);
    expect(await names({ 'filter[qty][in]': '5,-3' })).to.deep.equal(['Apple', 'Cherry']);
    expect(await names({ 'filter[qty][nin]': '5,-3,0' })).to.deep.equal(['Date 100%', 'apricot']);
    // 10 > 9 numerically (as text "10" < "9").
    expect(await names({ 'filter[price][gt]': '9' })).to.deep.equal(['Date 100%']);
    expect(await names({ 'filter[price][gte]': '2.25', 'filter[price][lte]': '4' })).to.deep.equal(['Banana_split', 'apricot']);
    expect(await names({ 'filter[price][lt]': '1.5' })).to.deep.equal(['Cherry']);
    expect(await names({ 'filter[price]': '1.5' })).to.deep.equal(['Apple']);
  });

  it('reads filter[active]=true as a boolean', async () => {
    expect(await names({ 'filter[active]': 'true' })).to.deep.equal(['Apple', 'Banana_split', 'Date 100%']);
    expect(await names({ 'filter[active][eq]': 'false' })).to.deep.equal(['Cherry', 'apricot']);
    expect(await names({ 'filter[active][ne]': 'true' })).to.deep.equal(['Cherry', 'apricot']);
    expect(await names({ 'filter[active][in]': 'true,false' })).to.have.length(5);
  });

  it('filters with exists on scalar, object and array fields', async () => {
    expect(await names({ 'filter[tag][exists]': 'true' })).to.deep.equal(['Apple', 'Date 100%', 'apricot']);
    expect(await names({ 'filter[tag][exists]': 'false' })).to.deep.equal(['Banana_split', 'Cherry']);
    expect(await names({ 'filter[meta][exists]': 'true' })).to.deep.equal(['Apple']);
    expect(await names({ 'filter[tags][exists]': 'true' })).to.deep.equal(['Date 100%']);
  });

  it('filters on server fields: id, createdAt, version', async () => {
    expect(await names({ 'filter[id]': ids.Cherry })).to.deep.equal(['Cherry']);
    expect(await names({ 'filter[id][in]': `${ids.Apple},${ids.Cherry}` })).to.deep.equal(['Apple', 'Cherry']);
    const all = (await list({ sort: 'createdAt' })).body.data.items as Item[];
    const third = all[2].createdAt;
    const after = await names({ 'filter[createdAt][gte]': third });
    expect(after).to.include.members([all[2].name, all[3].name, all[4].name]);
    expect(await names({ 'filter[createdAt][lt]': '2000-01-01T00:00:00.000Z' })).to.deep.equal([]);
    expect(await names({ 'filter[version]': '1' })).to.have.length(5);
    expect(await names({ 'filter[version][gt]': '1' })).to.deep.equal([]);
  });

  it('combines several filters with AND, and repeats of one operator', async () => {
    expect(await names({ 'filter[active]': 'true', 'filter[qty][gt]': '0', 'filter[tag]': 'fruit' })).to.deep.equal(['Apple']);
  });

  it('answers 400 invalid_filter for an unknown field, operator or malformed parameter', async () => {
    await invalidFilter({ 'filter[nope]': 'x' });
    await invalidFilter({ 'filter[name][regex]': 'x' });
    await invalidFilter({ 'filter[name][EQ]': 'x' });
    await invalidFilter({ 'filter[name': 'x' });
    await invalidFilter({ 'filter[data->>x]': 'x' });
    await invalidFilter({ "filter[name') or 1=1 --]": 'x' });
  });

  it('answers 400 invalid_filter for a value of the wrong type or an operator the type lacks', async () => {
    await invalidFilter({ 'filter[qty]': 'many' });
    await invalidFilter({ 'filter[qty]': '1.5' });
    await invalidFilter({ 'filter[price][gt]': 'cheap' });
    await invalidFilter({ 'filter[active]': 'yes' });
    await invalidFilter({ 'filter[active][gt]': 'true' });
    await invalidFilter({ 'filter[qty][like]': '1%' });
    await invalidFilter({ 'filter[meta][eq]': 'x' });
    await invalidFilter({ 'filter[tag][exists]': 'maybe' });
    await invalidFilter({ 'filter[version]': 'v1' });
    await invalidFilter({ 'filter[qty][in]': Array.from({ length: 101 }, (_, i) => i).join(',') });
  });

  it('sorts by several keys ascending and descending, nulls as the smallest value', async () => {
    const res = await list({ sort: 'active,-qty' });
    expect(res.body.data.items.map((i: Item) => i.name)).to.deep.equal(['apricot', 'Cherry', 'Date 100%', 'Apple', 'Banana_split']);
    const byTag = (await list({ sort: 'tag,name' })).body.data.items.map((i: Item) => i.tag ?? null);
    expect(byTag).to.deep.equal([null, null, 'dried', 'fruit', 'fruit']);
    const byTagDesc = (await list({ sort: '-tag,name' })).body.data.items.map((i: Item) => i.tag ?? null);
    expect(byTagDesc).to.deep.equal(['fruit', 'fruit', 'dried', null, null]);
    const byPrice = (await list({ sort: '-price' })).body.data.items.map((i: Item) => i.price);
    expect(byPrice).to.deep.equal([10, 4, 2.25, 1.5, 0.1]);
  });

  it('answers 400 invalid_filter for a sort on an unknown or non-scalar field', async () => {
    await invalidFilter({ sort: 'nope' });
    await invalidFilter({ sort: 'meta' });
    await invalidFilter({ sort: 'qty,-qty' });
    await invalidFilter({ sort: 'name,qty,price,active,tag' });
  });

  it('bounds limit to 1..200 and pages with offset', async () => {
    for (const limit of ['0', '201', '-1', 'ten', '1.5']) {
      const res = await list({ limit });
      expect(res.status, limit).to.equal(400);
      expect(res.body.data.code).to.equal('validation_failed');
    }
    expect((await list({ limit: 200 })).status).to.equal(200);
    const page = await list({ sort: 'qty', limit: 2, offset: 2 });
    expect(page.body.data.items.map((i: Item) => i.qty)).to.deep.equal([5, 12]);
    expect(page.body.data.pagination).to.include({ limit: 2, offset: 2, total: 5, hasMore: true });
    const end = await list({ sort: 'qty', limit: 2, offset: 4 });
    expect(end.body.data.pagination).to.include({ hasMore: false, nextCursor: null });
    expect((await list({ offset: '-1' })).status).to.equal(400);
  });

  it('returns only the requested fields (and id) with fields=', async () => {
    const res = await list({ fields: 'name,qty', sort: 'qty', limit: 1 });
    expect(res.body.data.items).to.deep.equal([{ id: ids.Cherry, name: 'Cherry', qty: -3 }]);
    const server = await list({ fields: 'version,createdAt', limit: 1 });
    expect(Object.keys(server.body.data.items[0]).sort()).to.deep.equal(['createdAt', 'id', 'version']);
    await invalidFilter({ fields: 'name,secret' });
  });

  it('leaves the total out with count=false', async () => {
    const res = await list({ count: 'false', limit: 2 });
    expect(res.body.data.pagination).to.include({ total: null, hasMore: true });
    expect(res.body.data.items).to.have.length(2);
    expect((await list({ count: 'true' })).body.data.pagination.total).to.equal(5);
    await invalidFilter({ count: 'maybe' });
  });

  it('answers 400 for a malformed cursor or one of another sort order', async () => {
    for (const cursor of ['%%%', 'bm90IGpzb24', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('[{"x":1},"y"]').toString('base64url')]) {
      const res = await list({ cursor });
      expect(res.status, cursor).to.equal(400);
      expect(res.body.status).to.equal('fail');
    }
    const first = await list({ limit: 2, sort: 'qty' });
    const other = await list({ limit: 2, sort: 'qty,name', cursor: first.body.data.pagination.nextCursor });
    expect(other.status).to.equal(400);
  });
});

describe('GET /api/v1/data/:ns/:schema (keyset paging over 300 records)', () => {
  let t: TestApp;
  let tenant: string;
  const total = 300;

  before(async function () {
    this.timeout(120_000);
    t = await sharedTestApp();
    tenant = await createTenant(t, 'page');
    await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send(itemSchema).expect(201);
    const headers = as(tenant, 'editor');
    for (let start = 0; start < total; start += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, k) => {
        const i = start + k;
        const item: Item = { name: `n${String(i).padStart(3, '0')}`, grp: i % 4, qty: i % 7, price: (i % 5) / 2, active: i % 2 === 0 };
        if (i % 3 !== 0) item.label = `l${String(i % 10).padStart(2, '0')}`;
        return t.http.post('/api/v1/data/qry/item').set(headers).send(item).expect(201);
      }));
    }
  });

  type Key = { field: string; desc: boolean };
  const parse = (sort: string): Key[] => sort.split(',').map((s) => ({ field: s.replace(/^-/, ''), desc: s.startsWith('-') }));
  const compare = (a: unknown, b: unknown) => {
    if (a === b) return 0;
    if (a === undefined || a === null) return -1;
    if (b === undefined || b === null) return 1;
    return (a as any) < (b as any) ? -1 : 1;
  };

  async function walk(sort: string, limit: number, extra: Record<string, string> = {}): Promise<Item[]> {
    const seen: Item[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 200; pages++) {
      const query: Record<string, string | number> = { sort, limit, count: 'false', ...extra };
      if (cursor) query.cursor = cursor;
      const res = await t.http.get('/api/v1/data/qry/item').query(query).set(as(tenant, 'viewer'));
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      seen.push(...res.body.data.items);
      cursor = res.body.data.pagination.nextCursor;
      expect(res.body.data.pagination.hasMore).to.equal(cursor !== null);
      if (!cursor) break;
    }
    return seen;
  }

  for (const sort of ['-createdAt', 'createdAt', 'grp', '-grp,label', 'label', '-label', 'active,-price,qty', '-version', 'name']) {
    it(`walks every record exactly once, in order, with sort=${sort}`, async () => {
      const seen = await walk(sort, 7);
      expect(seen).to.have.length(total);
      expect(new Set(seen.map((i) => i.id)).size).to.equal(total);
      const keys = [...parse(sort), { field: 'id', desc: parse(sort).at(-1)!.desc }];
      for (let i = 1; i < seen.length; i++) {
        let order = 0;
        for (const key of keys) {
          order = compare(seen[i - 1][key.field], seen[i][key.field]) * (key.desc ? -1 : 1);
          if (order !== 0) break;
        }
        expect(order, `${sort}: items ${i - 1} and ${i}`).to.equal(-1);
      }
      const offsetOrder = [
        ...(await t.http.get('/api/v1/data/qry/item').query({ sort, limit: 200 }).set(as(tenant, 'viewer'))).body.data.items,
        ...(await t.http.get('/api/v1/data/qry/item').query({ sort, limit: 200, offset: 200 }).set(as(tenant, 'viewer'))).body.data.items,
      ];
      expect(seen.map((i) => i.id)).to.deep.equal(offsetOrder.map((i: Item) => i.id));
    });
  }

  it('walks a filtered list with a cursor', async () => {
    const seen = await walk('-label,name', 11, { 'filter[grp]': '2' });
    expect(seen).to.have.length(total / 4);
    expect(seen.every((i) => i.grp === 2)).to.equal(true);
    expect(new Set(seen.map((i) => i.id)).size).to.equal(total / 4);
  });
});

describe('fields named like built-in object properties (review finding)', () => {
  it('filters, sorts and indexes a property called constructor like any other', async () => {
    const t = await sharedTestApp();
    const tenant = await createTenant(t, 'proto');
    const reg = await t.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
      namespace: 'odd', name: 'thing',
      schema: { type: 'object', properties: { constructor: { type: 'string' }, valueOf: { type: 'integer' } } },
      indexes: [['constructor'], ['valueOf']],
    });
    expect(reg.status, JSON.stringify(reg.body)).to.equal(201);
    for (const [c, v] of [['b', 2], ['a', 1], ['c', 3]] as const) {
      await t.http.post('/api/v1/data/odd/thing').set(as(tenant, 'editor')).send({ constructor: c, valueOf: v }).expect(201);
    }
    const sorted = await t.http.get('/api/v1/data/odd/thing').query({ sort: 'constructor' }).set(as(tenant, 'viewer'));
    expect(sorted.status, JSON.stringify(sorted.body)).to.equal(200);
    expect(sorted.body.data.items.map((i: { constructor: string }) => i.constructor)).to.deep.equal(['a', 'b', 'c']);
    const filtered = await t.http.get('/api/v1/data/odd/thing').query({ 'filter[valueOf][gte]': '2' }).set(as(tenant, 'viewer'));
    expect(filtered.body.data.items.map((i: { valueOf: number }) => i.valueOf).sort()).to.deep.equal([2, 3]);
  });
});

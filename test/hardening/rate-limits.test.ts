import { expect } from 'chai';
import { loadConfig } from '../../config/index.js';
import { withinOneWindow } from '../helpers/rate-window.js';
import { createTenant, startTestApp, testEnvironment, type TestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';

describe('Rate limits of the public runtime and POST /events/publish (#17)', () => {
  let t: TestApp;
  let tenant: string;
  let other: string;

  before(async () => {
    t = await startTestApp({ env: { PUBLIC_RATE_LIMIT_PER_MINUTE: '8', EVENTS_PUBLISH_RATE_LIMIT_PER_MINUTE: '5' } });
    tenant = await createTenant(t, 'rl');
    other = await createTenant(t, 'rl');
  });
  after(() => t?.close());

  it('defaults to 600 a minute for both', () => {
    const config = loadConfig(testEnvironment('sqlite::memory:', { PUBLIC_RATE_LIMIT_PER_MINUTE: '', EVENTS_PUBLISH_RATE_LIMIT_PER_MINUTE: '' }));
    expect(config.rateLimits).to.deep.equal({ publicPerMinute: 600, eventsPublishPerMinute: 600 });
  });

  it('answers the public runtime 429 rate_limited with Retry-After past the limit per client address, over all tenants', async () => {
    const paths = [`/api/v1/public/tenant/${tenant}/content/page`, `/api/v1/public/tenant/${other}/content/page`, '/api/v1/public/resolve-host?host=nowhere.example'];
    await withinOneWindow(60_000, 5000);
    const statuses: number[] = [];
    let limited = null;
    for (let i = 0; i < 12; i++) {
      const res = await t.http.get(paths[i % paths.length]!);
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.filter((s) => s !== 429)).to.have.length(8);
    expect(statuses.slice(8)).to.deep.equal([429, 429, 429, 429]);
    expect(limited!.body.error.code).to.equal('rate_limited');
    expect(Number(limited!.headers['retry-after'])).to.be.within(1, 60);
    // Authenticated routes are not counted against the public limit.
    expect((await t.http.get('/api/v1/cms/pages').set(as(tenant, 'viewer'))).status).to.equal(200);
    // A method no route serves still answers 405 with Allow past the limit (#33).
    const trace = await t.http.trace(`/api/v1/public/tenant/${tenant}/content/page`);
    expect([trace.status, trace.headers.allow]).to.deep.equal([405, 'HEAD, GET']);
    // Nor a method the path has no route for (PUT on a page, served by GET only).
    const put = await t.http.put(`/api/v1/public/tenant/${tenant}/content/page`).send({});
    expect([put.status, put.headers.allow]).to.deep.equal([405, 'HEAD, GET']);
    // A method the path serves is counted still.
    expect((await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`)).status).to.equal(429);
  });

  it('counts the public runtime per process, in memory: a second process keeps its own count, and no request writes a row', async () => {
    const second = await startTestApp({ database: t.database, env: { MIGRATE_ON_START: 'false', PUBLIC_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const path = `/api/v1/public/tenant/${tenant}/content/page`;
      await withinOneWindow(60_000, 5000);
      const rows = async () => Number((await t.app.kernel.db.knex('rate_limits').count({ n: '*' }))[0]!.n);
      const before = await rows();
      // The first process (limit 8) used up its window, whatever earlier tests took of it ...
      let first = 0;
      while ((await t.http.get(path)).status !== 429) expect(++first).to.be.at.most(8);
      // ... and the second one still answers, up to its own limit.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await second.http.get(path)).status);
      expect(statuses).to.deep.equal([200, 200, 200, 429]);
      expect((await t.http.get(path)).status).to.equal(429);
      expect(await rows()).to.equal(before);
    } finally {
      await second.close();
    }
  });

  it('answers POST /events/publish 429 past the limit per tenant, and another tenant publishes on', async () => {
    const publish = (id: string) => t.http.post('/api/v1/events/publish').set(as(id, 'editor')).send({ event: 'shop.order.placed', payload: { n: 1 } });
    await withinOneWindow(60_000, 5000);
    const statuses = await Promise.all(Array.from({ length: 8 }, () => publish(tenant)));
    expect(statuses.filter((r) => r.status === 202)).to.have.length(5);
    const refused = statuses.filter((r) => r.status === 429);
    expect(refused).to.have.length(3);
    expect(refused[0]!.body.error.code).to.equal('rate_limited');
    expect(Number(refused[0]!.headers['retry-after'])).to.be.within(1, 60);
    expect((await publish(other)).status).to.equal(202);
  });
});

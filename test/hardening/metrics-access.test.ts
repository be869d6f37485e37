import { expect } from 'chai';
import { startTestApp, type TestApp } from '../helpers/test-app.js';
import { bearer } from '../helpers/tokens.js';

describe('GET /metrics in production (#17)', () => {
  const apps: TestApp[] = [];
  const start = async (env: Record<string, string>) => {
    const app = await startTestApp({ env: { NODE_ENV: 'production', DISPATCHER_ENABLED: 'false', ...env } });
    apps.push(app);
    return app;
  };
  after(async () => {
    for (const app of apps) await app.close();
  });

  it('answers 404 without METRICS_TOKEN, 200 with METRICS_PUBLIC=true, 401 without the token once one is set', async () => {
    const hidden = await start({});
    const none = await hidden.http.get('/metrics');
    expect(none.status).to.equal(404);
    expect(none.body.error.code).to.equal('not_found');

    const open = await start({ METRICS_PUBLIC: 'true' });
    const shown = await open.http.get('/metrics');
    expect(shown.status).to.equal(200);
    expect(shown.text).to.contain('http_requests_total');

    const guarded = await start({ METRICS_TOKEN: 'metrics-token-0123' });
    expect((await guarded.http.get('/metrics')).status).to.equal(401);
    expect((await guarded.http.get('/metrics').set(bearer('metrics-token-0123'))).status).to.equal(200);
  });
});

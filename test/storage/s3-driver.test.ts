import { expect } from 'chai';
import { freePort } from '../helpers/service-process.js';
import { createTenant, startTestApp } from '../helpers/test-app.js';
import { as } from '../helpers/tokens.js';
import { storageSuite } from './storage-suite.js';

describe('storage mediator, s3 driver (s3rver on loopback)', () => {
  storageSuite('s3');

  it('answers 503 unavailable saying the storage cannot be reached when the store is down (#34)', async function () {
    this.timeout(60_000);
    // A store at a port where nothing listens.
    const t = await startTestApp({ env: {
      STORAGE_DRIVER: 's3', S3_ENDPOINT: `http://127.0.0.1:${await freePort()}`, S3_BUCKET: 'down', S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: 'key', S3_SECRET_ACCESS_KEY: 'secret', S3_FORCE_PATH_STYLE: 'true',
    } });
    try {
      const tenant = await createTenant(t, 'st-down');
      const res = await t.http.post('/api/v1/storage/objects').set(as(tenant, 'editor'))
        .set('X-Platform-Product', 'shop').set('X-Platform-Collection', 'img').set('X-Platform-Filename', 'a.txt').set('Content-Type', 'text/plain')
        .send(Buffer.from('hello'));
      expect(res.status, JSON.stringify(res.body)).to.equal(503);
      expect(res.body.error.code).to.equal('unavailable');
      expect(res.body.message).to.match(/storage cannot be reached/);
      expect(res.body.message).to.not.match(/database/);
      expect(res.headers['retry-after']).to.equal('5');
    } finally {
      await t.close();
    }
  });
});

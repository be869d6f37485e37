import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { expect } from 'chai';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import { systemContext } from '../../core/base/request-context.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { as, superadmin } from '../helpers/tokens.js';
import { startS3Server, S3_ACCESS_KEY, S3_SECRET_KEY, type S3TestServer } from '../helpers/s3-server.js';

export type DriverName = 'local' | 's3';

/** The upload limit the storage tests run with (STORAGE_MAX_UPLOAD_BYTES). */
export const LIMIT = 65_536;

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A request sent exactly as written (no path normalisation), optionally with a chunked body. */
export function raw(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: Buffer | Buffer[] } = {},
): Promise<RawResponse> {
  const target = new URL(url);
  // Keep the path exactly as given: URL would resolve `..` and decode nothing, but re-encode.
  const path = url.slice(url.indexOf('/', target.protocol.length + 2));
  return new Promise((resolve, reject) => {
    const req = request({ host: target.hostname, port: target.port, method: options.method ?? 'GET', path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    const body = options.body;
    if (Array.isArray(body)) {
      for (const chunk of body) req.write(chunk);
      req.end();
    } else {
      req.end(body);
    }
  });
}

export function json(res: RawResponse): any {
  return JSON.parse(res.body.toString('utf8'));
}

export function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every file under a folder (recursive), relative to it. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? (e as any).path, e.name).slice(dir.length + 1));
}

/**
 * The storage tests, run once per driver (local-driver.test.ts, s3-driver.test.ts), through HTTP
 * against the real app on the engine under test (TEST_DB).
 */
export function storageSuite(driver: DriverName): void {
  let t: TestApp;
  let s3: S3TestServer | null = null;
  let s3Client: S3Client | null = null;
  let tenant: string;

  before(async () => {
    s3 = driver === 's3' ? await startS3Server() : null;
    t = await startTestApp({ env: { STORAGE_MAX_UPLOAD_BYTES: String(LIMIT), ...(s3?.env ?? {}) } });
    if (s3) {
      s3Client = new S3Client({
        endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true,
        credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
      });
    }
  });

  after(async () => {
    s3Client?.destroy();
    await t?.close();
    await s3?.close();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'st');
  });

  function upload(body: Buffer | string, options: { filename?: string; visibility?: string; contentType?: string; tenant?: string; collection?: string } = {}) {
    const req = t.http.post('/api/v1/storage/objects')
      .set(as(options.tenant ?? tenant, 'editor'))
      .set('X-Platform-Product', 'shop')
      .set('X-Platform-Collection', options.collection ?? 'images')
      .set('X-Platform-Filename', options.filename ?? 'a.txt')
      .set('Content-Type', options.contentType ?? 'text/plain');
    if (options.visibility) req.set('X-Platform-Visibility', options.visibility);
    return req.send(Buffer.isBuffer(body) ? body : Buffer.from(body));
  }

  async function objectInStore(key: string): Promise<boolean> {
    if (driver === 'local') {
      return existsSync(join(t.config.storage.dir, key));
    }
    try {
      await s3Client!.send(new HeadObjectCommand({ Bucket: s3!.bucket, Key: key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404) return false;
      throw err;
    }
  }

  async function listKeys(forTenant = tenant): Promise<string[]> {
    const res = await t.http.get('/api/v1/storage/objects').set(as(forTenant, 'viewer'));
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    return res.body.data.items.map((i: { key: string }) => i.key);
  }

  /** Nothing of an upload was kept: no object in the store, no metadata, no temporary file (local). */
  async function expectNothingKept(key: string) {
    expect(await objectInStore(key), 'object in the store').to.equal(false);
    expect(await listKeys(), 'metadata rows').to.deep.equal([]);
    if (driver === 'local') {
      expect(filesUnder(t.config.storage.dir).filter((f) => f.startsWith('.tmp') || f.includes(tenant)), 'files').to.deep.equal([]);
    }
  }

  async function presign(query: Record<string, string | number>) {
    const params = { product: 'shop', collection: 'images', filename: 'a.txt', contentType: 'text/plain', ...query };
    return t.http.get('/api/v1/storage/presigned-upload').query(params).set(as(tenant, 'editor'));
  }

  async function signedUrl(key: string, query: Record<string, string | number> = {}) {
    return t.http.get('/api/v1/storage/signed-url').query({ key, ...query }).set(as(tenant, 'viewer'));
  }

  describe('POST /api/v1/storage/objects', () => {
    it('stores the body under the tenant key and answers 201 with size, type, sha256 and visibility', async () => {
      const body = randomBytes(5000);
      const res = await upload(body, { filename: 'photo.bin', contentType: 'application/octet-stream' });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      expect(res.body.data).to.deep.equal({
        key: `tenants/${tenant}/products/shop/images/photo.bin`, size: 5000, contentType: 'application/octet-stream',
        sha256: sha256(body), visibility: 'private',
      });
      expect(await objectInStore(res.body.data.key)).to.equal(true);
      const link = await signedUrl(res.body.data.key);
      const download = await raw(link.body.data.url);
      expect(download.status).to.equal(200);
      expect(download.body.equals(body)).to.equal(true);
    });

    it('takes the tenant from the caller: a superadmin stores under the X-Tenant-Id tenant', async () => {
      const res = await t.http.post('/api/v1/storage/objects').set(superadmin(tenant))
        .set('X-Platform-Product', 'shop').set('X-Platform-Collection', 'docs').set('X-Platform-Filename', 'x.txt')
        .set('Content-Type', 'text/plain').send(Buffer.from('x'));
      expect(res.status).to.equal(201);
      expect(res.body.data.key).to.equal(`tenants/${tenant}/products/shop/docs/x.txt`);
    });

    it('replaces an object of the same key and keeps one metadata row', async () => {
      await upload('first version').expect(201);
      const res = await upload('second', { visibility: 'public' });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ size: 6, visibility: 'public' });
      expect(await listKeys()).to.deep.equal([`tenants/${tenant}/products/shop/images/a.txt`]);
      const asset = await raw(`${t.baseUrl}/api/v1/public/assets/${tenant}/products/shop/images/a.txt`);
      expect(asset.body.toString()).to.equal('second');
    });

    for (const header of ['X-Platform-Product', 'X-Platform-Collection', 'X-Platform-Filename']) {
      it(`answers 400 missing_header without ${header}`, async () => {
        const headers: Record<string, string> = {
          ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': 'a.txt', 'Content-Type': 'text/plain',
        };
        delete headers[header];
        const res = await raw(`${t.baseUrl}/api/v1/storage/objects`, { method: 'POST', headers, body: Buffer.from('data') });
        expect(res.status).to.equal(400);
        expect(json(res).error.code).to.equal('missing_header');
        expect(json(res).message).to.contain(header);
      });
    }

    for (const filename of ['..', '../a.txt', 'a/b.txt', '.hidden', 'a\\b.txt', '%2e%2e', 'a b.txt', 'x'.repeat(129)]) {
      it(`answers 400 invalid_key_segment for the filename ${JSON.stringify(filename.slice(0, 20))}`, async () => {
        const res = await raw(`${t.baseUrl}/api/v1/storage/objects`, {
          method: 'POST',
          headers: { ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': filename, 'Content-Type': 'text/plain' },
          body: Buffer.from('data'),
        });
        expect(res.status).to.equal(400);
        expect(json(res).error.code).to.equal('invalid_key_segment');
        expect(await listKeys()).to.deep.equal([]);
      });
    }

    it('answers 400 invalid_key_segment for a traversal in the product header', async () => {
      const res = await t.http.post('/api/v1/storage/objects').set(as(tenant, 'editor'))
        .set('X-Platform-Product', '..').set('X-Platform-Collection', 'images').set('X-Platform-Filename', 'a.txt').send(Buffer.from('x'));
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_key_segment');
    });

    it('answers 400 validation_failed for a visibility other than public or private', async () => {
      const res = await upload('x', { visibility: 'world' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
      expect(res.body.error.details[0].path).to.equal('header/X-Platform-Visibility');
    });

    it('answers 403 forbidden for a viewer', async () => {
      const res = await t.http.post('/api/v1/storage/objects').set(as(tenant, 'viewer'))
        .set('X-Platform-Product', 'shop').set('X-Platform-Collection', 'images').set('X-Platform-Filename', 'a.txt').send(Buffer.from('x'));
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });

    it('answers 413 payload_too_large for a declared length over the limit and keeps nothing', async () => {
      const res = await upload(randomBytes(LIMIT + 1));
      expect(res.status).to.equal(413);
      expect(res.body.error.code).to.equal('payload_too_large');
      await expectNothingKept(`tenants/${tenant}/products/shop/images/a.txt`);
    });

    it('answers 413 for a chunked body that passes the limit mid-stream and keeps no partial object', async () => {
      const chunks = Array.from({ length: 10 }, () => randomBytes(LIMIT / 8));
      const res = await raw(`${t.baseUrl}/api/v1/storage/objects`, {
        method: 'POST',
        headers: { ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': 'a.txt', 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' },
        body: chunks,
      });
      expect(res.status).to.equal(413);
      expect(json(res).error.code).to.equal('payload_too_large');
      await expectNothingKept(`tenants/${tenant}/products/shop/images/a.txt`);
    });

    it('accepts a chunked body within the limit', async () => {
      const chunks = [randomBytes(1000), randomBytes(2000)];
      const res = await raw(`${t.baseUrl}/api/v1/storage/objects`, {
        method: 'POST',
        headers: { ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': 'c.bin', 'Transfer-Encoding': 'chunked' },
        body: chunks,
      });
      expect(res.status).to.equal(201);
      expect(json(res).data).to.include({ size: 3000, sha256: sha256(Buffer.concat(chunks)), contentType: 'application/octet-stream' });
    });

    it('keeps no object file and no metadata row when the upload is cut off mid-stream', async () => {
      const target = new URL(`${t.baseUrl}/api/v1/storage/objects`);
      const total = 60_000;
      let partialSeen = false;
      await new Promise<void>((resolve) => {
        const req = request({
          host: target.hostname, port: target.port, method: 'POST', path: target.pathname,
          headers: { ...as(tenant, 'editor'), 'X-Platform-Product': 'shop', 'X-Platform-Collection': 'images', 'X-Platform-Filename': 'cut.bin', 'Content-Type': 'application/octet-stream', 'Content-Length': String(total) },
        });
        req.on('error', () => resolve());
        req.write(randomBytes(total / 2), () => {
          // Half way: the client goes away (on the local driver, once the partial file is being written).
          setTimeout(() => {
            if (driver === 'local') partialSeen = filesUnder(t.config.storage.dir).some((f) => f.startsWith('.tmp'));
            req.destroy();
            resolve();
          }, 100);
        });
      });
      await sleep(400);
      if (driver === 'local') expect(partialSeen, 'a partial temporary file while streaming').to.equal(true);
      await expectNothingKept(`tenants/${tenant}/products/shop/images/cut.bin`);
    });
  });

  describe('GET /api/v1/storage/presigned-upload', () => {
    it('answers a PUT URL with headers and expiry; the PUT with those headers stores the object', async () => {
      const body = Buffer.from('presigned body');
      const res = await presign({ contentLength: body.length, visibility: 'public' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const data = res.body.data;
      expect(data.key).to.equal(`tenants/${tenant}/products/shop/images/a.txt`);
      expect(data.method).to.equal('PUT');
      expect(data.headers['Content-Type']).to.equal('text/plain');
      const expiresIn = (Date.parse(data.expiresAt) - Date.now()) / 1000;
      expect(expiresIn).to.be.within(15 * 60 - 5, 15 * 60 + 1);

      const put = await raw(data.url, { method: 'PUT', headers: { ...data.headers, 'Content-Length': String(body.length) }, body });
      expect(put.status, put.body.toString()).to.equal(200);

      const link = await signedUrl(data.key);
      expect(link.status, JSON.stringify(link.body)).to.equal(200);
      const download = await raw(link.body.data.url);
      expect(download.body.toString()).to.equal('presigned body');
      const list = await t.http.get('/api/v1/storage/objects').query({ product: 'shop', collection: 'images' }).set(as(tenant, 'viewer'));
      expect(list.body.data.items).to.have.length(1);
      expect(list.body.data.items[0]).to.include({ key: data.key, size: body.length, contentType: 'text/plain', visibility: 'public' });
      const asset = await raw(`${t.baseUrl}/api/v1/public/assets/${tenant}/products/shop/images/a.txt`);
      expect(asset.status).to.equal(200);
      expect(asset.body.toString()).to.equal('presigned body');
    });

    it('refuses a PUT with another Content-Type than the signed one (403)', async () => {
      const res = await presign({ contentLength: 4 });
      const { url } = res.body.data;
      const put = await raw(url, { method: 'PUT', headers: { 'Content-Type': 'text/html', 'Content-Length': '4' }, body: Buffer.from('<b/>') });
      expect(put.status).to.equal(403);
      expect(await objectInStore(res.body.data.key)).to.equal(false);
    });

    it('refuses a PUT larger than the signed size', async () => {
      const res = await presign({ contentLength: 10 });
      const { url, headers } = res.body.data;
      const body = randomBytes(20);
      const put = await raw(url, { method: 'PUT', headers: { ...headers, 'Content-Length': '20' }, body });
      // The local driver checks the signed maximum itself (413); S3 refuses the signature (403).
      expect(put.status).to.equal(driver === 'local' ? 413 : 403);
      expect(await objectInStore(res.body.data.key)).to.equal(false);
      expect(await signedUrl(res.body.data.key).then((r) => r.status)).to.equal(404);
    });

    it('refuses a tampered URL (other key, other visibility, other signature) with 403', async () => {
      const res = await presign({ contentLength: 2 });
      const { url, headers } = res.body.data;
      const tampered = [
        url.replace('a.txt', 'b.txt'),
        url.replace('visibility=private', 'visibility=public'),
        url.replace(/(ignature=)(.)/, (_m: string, p: string, c: string) => `${p}${c === 'A' ? 'B' : 'A'}`),
      ];
      for (const bad of tampered) {
        expect(bad).to.not.equal(url);
        const put = await raw(bad, { method: 'PUT', headers, body: Buffer.from('hi') });
        expect(put.status, bad).to.equal(403);
      }
      expect(await listKeys()).to.deep.equal([]);
    });

    it('refuses an expired URL with 403', async () => {
      const res = await presign({ contentLength: 2, expiresIn: 1 });
      await sleep(2100);
      const put = await raw(res.body.data.url, { method: 'PUT', headers: res.body.data.headers, body: Buffer.from('hi') });
      expect(put.status).to.equal(403);
      expect(await objectInStore(res.body.data.key)).to.equal(false);
    });

    it('answers 403 forbidden for a viewer', async () => {
      const res = await t.http.get('/api/v1/storage/presigned-upload')
        .query({ product: 'shop', collection: 'images', filename: 'a.txt', contentLength: 2 }).set(as(tenant, 'viewer'));
      expect(res.status).to.equal(403);
    });

    it('answers 400 validation_failed for an expiry over 7 days', async () => {
      const res = await presign({ contentLength: 2, expiresIn: 7 * 24 * 3600 + 1 });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('validation_failed');
    });

    it('answers 400 invalid_key_segment for a traversal in the collection', async () => {
      const res = await presign({ contentLength: 2, collection: '..' });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.equal('invalid_key_segment');
    });

    it('answers 400 at query/contentLength for a size over the upload limit, the document\'s maximum (#33)', async () => {
      const res = await presign({ contentLength: LIMIT + 1 });
      expect([res.status, res.body.error.code, res.body.error.details[0].path]).to.deep.equal([400, 'validation_failed', 'query/contentLength']);
      const doc = (await t.http.get('/api/v1/openapi.json')).body;
      const limit = doc.paths['/api/v1/storage/presigned-upload'].get.parameters.find((p: { name: string }) => p.name === 'contentLength');
      expect(limit.schema.maximum).to.equal(LIMIT);
      expect((await presign({ contentLength: LIMIT })).status).to.equal(200);
    });

    if (driver === 's3') {
      it('answers 400 validation_failed without contentLength (S3 signs an exact size)', async () => {
        const res = await presign({});
        expect(res.status).to.equal(400);
        expect(res.body.error.details[0].path).to.equal('query/contentLength');
      });
    } else {
      it('bounds the size by the upload limit without contentLength', async () => {
        const res = await presign({});
        expect(res.status).to.equal(200);
        const { url, headers } = res.body.data;
        const over = await raw(url, { method: 'PUT', headers, body: randomBytes(LIMIT + 1) });
        expect(over.status).to.equal(413);
        const fits = await raw(url, { method: 'PUT', headers, body: Buffer.from('fits') });
        expect(fits.status).to.equal(200);
        expect(json(fits).data).to.include({ size: 4, sha256: sha256(Buffer.from('fits')) });
      });
    }
  });

  describe('GET /api/v1/storage/signed-url', () => {
    it('answers a URL that downloads a private object, valid for an hour by default', async () => {
      const stored = await upload('secret', { filename: 'secret.txt' });
      const res = await signedUrl(stored.body.data.key);
      expect(res.status).to.equal(200);
      expect((Date.parse(res.body.data.expiresAt) - Date.now()) / 1000).to.be.within(3600 - 5, 3601);
      const download = await raw(res.body.data.url);
      expect(download.status).to.equal(200);
      expect(download.body.toString()).to.equal('secret');
      const asset = await raw(`${t.baseUrl}/api/v1/public/assets/${tenant}/products/shop/images/secret.txt`);
      expect(asset.status).to.equal(404);
    });

    it('answers 403 for a key of another tenant', async () => {
      const other = await createTenant(t, 'st');
      const stored = await upload('theirs', { tenant: other });
      const res = await signedUrl(stored.body.data.key);
      expect(res.status).to.equal(403);
      expect(res.body.error.code).to.equal('forbidden');
    });

    it('answers 404 for an unknown key and 400 invalid_key_segment for a malformed one', async () => {
      expect((await signedUrl(`tenants/${tenant}/products/shop/images/none.txt`)).status).to.equal(404);
      const bad = await signedUrl(`tenants/${tenant}/products/shop/../../etc/passwd`);
      expect(bad.status).to.equal(400);
      expect(bad.body.error.code).to.equal('invalid_key_segment');
    });

    it('refuses a tampered or expired download URL with 403', async () => {
      await upload('one', { filename: 'one.txt' });
      await upload('two', { filename: 'two.txt' });
      const res = await signedUrl(`tenants/${tenant}/products/shop/images/one.txt`, { expiresIn: 1 });
      const { url } = res.body.data;
      expect((await raw(url.replace('one.txt', 'two.txt'))).status).to.equal(403);
      await sleep(2100);
      expect((await raw(url)).status).to.equal(403);
    });
  });

  if (driver === 'local') {
    describe('PUT and GET /api/v1/storage/local/objects (signed URLs of a suspended tenant)', () => {
      it('answers 404 tenant_not_found to a previously signed GET and PUT once the tenant is suspended', async () => {
        const stored = await upload('kept', { filename: 'kept.txt' });
        const link = await signedUrl(stored.body.data.key);
        expect(link.status, JSON.stringify(link.body)).to.equal(200);
        const body = Buffer.from('late upload');
        const presigned = await presign({ filename: 'late.txt', contentLength: body.length });
        expect(presigned.status, JSON.stringify(presigned.body)).to.equal(200);
        expect((await raw(link.body.data.url)).status).to.equal(200);

        const suspend = await t.http.patch(`/api/v1/admin/tenants/${tenant}`).set(superadmin()).send({ status: 'suspended' });
        expect(suspend.status, JSON.stringify(suspend.body)).to.equal(200);

        const download = await raw(link.body.data.url);
        expect(download.status).to.equal(404);
        expect(JSON.parse(download.body.toString()).error.code).to.equal('tenant_not_found');
        const { url, headers } = presigned.body.data;
        const put = await raw(url, { method: 'PUT', headers: { ...headers, 'Content-Length': String(body.length) }, body });
        expect(put.status).to.equal(404);
        expect(JSON.parse(put.body.toString()).error.code).to.equal('tenant_not_found');
        expect(await objectInStore(`tenants/${tenant}/products/shop/images/late.txt`)).to.equal(false);
      });
    });
  }

  describe('GET and DELETE /api/v1/storage/objects', () => {
    it('lists by product and collection, paged', async () => {
      for (const name of ['a.txt', 'b.txt', 'c.txt']) await upload(name, { filename: name });
      await upload('doc', { filename: 'd.txt', collection: 'docs' });
      const page = await t.http.get('/api/v1/storage/objects').query({ product: 'shop', collection: 'images', limit: 2 }).set(as(tenant, 'viewer'));
      expect(page.status).to.equal(200);
      expect(page.body.data.items.map((i: { filename: string }) => i.filename)).to.deep.equal(['a.txt', 'b.txt']);
      expect(page.body.data.pagination).to.include({ limit: 2, offset: 0, total: 3, hasMore: true });
      const next = await t.http.get('/api/v1/storage/objects').query({ product: 'shop', collection: 'images', limit: 2, offset: 2 }).set(as(tenant, 'viewer'));
      expect(next.body.data.items.map((i: { filename: string }) => i.filename)).to.deep.equal(['c.txt']);
      expect(next.body.data.pagination.hasMore).to.equal(false);
      const other = await createTenant(t, 'st');
      expect(await listKeys(other)).to.deep.equal([]);
    });

    it('deletes an object: bytes and metadata', async () => {
      const stored = await upload('bye');
      const key = stored.body.data.key;
      const res = await t.http.delete('/api/v1/storage/objects').query({ key }).set(as(tenant, 'editor'));
      expect(res.status).to.equal(200);
      expect(await objectInStore(key)).to.equal(false);
      expect(await listKeys()).to.deep.equal([]);
      expect((await t.http.delete('/api/v1/storage/objects').query({ key }).set(as(tenant, 'editor'))).status).to.equal(404);
    });

    it('answers 403 deleting a key of another tenant', async () => {
      const other = await createTenant(t, 'st');
      const stored = await upload('theirs', { tenant: other });
      const res = await t.http.delete('/api/v1/storage/objects').query({ key: stored.body.data.key }).set(as(tenant, 'editor'));
      expect(res.status).to.equal(403);
      expect(await objectInStore(stored.body.data.key)).to.equal(true);
    });
  });

  describe('pack.storage (the service packs get)', () => {
    it('putObject stores a Buffer or a stream, publicUrl serves it, getObject reads it, deleteObject removes it', async () => {
      const storage = t.app.kernel.storage;
      const rc = systemContext(tenant);
      const fromBuffer = await storage.putObject(rc, {
        product: 'cms', collection: 'media', filename: 'hero.txt', contentType: 'text/plain', visibility: 'public', body: Buffer.from('hero'),
      });
      expect(fromBuffer).to.include({ key: `tenants/${tenant}/products/cms/media/hero.txt`, size: 4, sha256: sha256(Buffer.from('hero')) });
      const url = storage.publicUrl(tenant, 'products/cms/media/hero.txt');
      expect(url).to.equal(`${t.baseUrl}/api/v1/public/assets/${tenant}/products/cms/media/hero.txt`);
      expect(storage.publicUrl(tenant, fromBuffer.key)).to.equal(url);
      expect((await raw(url)).body.toString()).to.equal('hero');

      await storage.putObject(rc, {
        product: 'cms', collection: 'media', filename: 'streamed.txt', body: Readable.from([Buffer.from('str'), Buffer.from('eamed')]),
      });
      const { object, body } = await storage.getObject(rc, `tenants/${tenant}/products/cms/media/streamed.txt`);
      expect(object).to.include({ size: 8, visibility: 'private', contentType: 'application/octet-stream' });
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(chunk as Buffer);
      expect(Buffer.concat(chunks).toString()).to.equal('streamed');

      await storage.deleteObject(rc, fromBuffer.key);
      expect((await raw(url)).status).to.equal(404);
      expect(() => storage.publicUrl(tenant, 'products/../x')).to.throw(/Invalid storage key segment/);
    });
  });

  describe('GET /api/v1/public/assets/:tenantId/*path', () => {
    const assetUrl = (path: string, forTenant = tenant) => `${t.baseUrl}/api/v1/public/assets/${forTenant}/${path}`;

    it('streams a public object with its type, ETag, Last-Modified, Cache-Control and nosniff', async () => {
      const body = randomBytes(3000);
      await upload(body, { filename: 'logo.png', contentType: 'image/png', visibility: 'public' });
      const res = await raw(assetUrl('products/shop/images/logo.png'));
      expect(res.status).to.equal(200);
      expect(res.body.equals(body)).to.equal(true);
      expect(res.headers['content-type']).to.equal('image/png');
      expect(res.headers['content-length']).to.equal('3000');
      expect(res.headers.etag).to.equal(`"${sha256(body)}"`);
      expect(Date.parse(String(res.headers['last-modified']))).to.be.greaterThan(0);
      expect(res.headers['cache-control']).to.contain('public');
      expect(res.headers['x-content-type-options']).to.equal('nosniff');
      // Stored bytes never run as a page of the service's origin, whatever type they claim (review finding).
      expect(res.headers['content-security-policy']).to.equal("sandbox; default-src 'none'");
      expect(res.headers['content-disposition']).to.equal(undefined);
      const head = await raw(assetUrl('products/shop/images/logo.png'), { method: 'HEAD' });
      expect(head.status).to.equal(200);
      expect(head.headers['content-length']).to.equal('3000');
      expect(head.headers.etag).to.equal(res.headers.etag);
      expect(head.body.length).to.equal(0);
    });

    it('serves HTML and SVG as attachments', async () => {
      await upload('<script>alert(1)</script>', { filename: 'page.html', contentType: 'text/html', visibility: 'public' });
      await upload('<svg xmlns="http://www.w3.org/2000/svg"/>', { filename: 'icon.svg', contentType: 'image/svg+xml', visibility: 'public' });
      for (const name of ['page.html', 'icon.svg']) {
        const res = await raw(assetUrl(`products/shop/images/${name}`));
        expect(res.status).to.equal(200);
        expect(res.headers['content-disposition']).to.equal('attachment');
        expect(res.headers['x-content-type-options']).to.equal('nosniff');
        const link = await signedUrl(`tenants/${tenant}/products/shop/images/${name}`);
        const download = await raw(link.body.data.url);
        expect(download.status).to.equal(200);
        expect(download.headers['content-disposition'], `signed ${name}`).to.equal('attachment');
      }
    });

    it('answers 404 for a private object, an unknown object, and 404 tenant_not_found for an unknown tenant', async () => {
      await upload('private', { filename: 'p.txt' });
      expect((await raw(assetUrl('products/shop/images/p.txt'))).status).to.equal(404);
      expect((await raw(assetUrl('products/shop/images/none.txt'))).status).to.equal(404);
      const unknown = await raw(assetUrl('products/shop/images/p.txt', 'no-such-tenant'));
      expect(unknown.status).to.equal(404);
      expect(json(unknown).error.code).to.equal('tenant_not_found');
    });

    it('answers 404 for every traversal spelling', async () => {
      const other = await createTenant(t, 'st');
      await upload('public of other', { tenant: other, filename: 'o.txt', visibility: 'public' });
      await upload('public', { filename: 'mine.txt', visibility: 'public' });
      const attempts = [
        `../${other}/products/shop/images/o.txt`,
        `products/shop/images/../../../../${other}/products/shop/images/o.txt`,
        `%2e%2e/${other}/products/shop/images/o.txt`,
        `%2E%2E%2F${other}%2Fproducts%2Fshop%2Fimages%2Fo.txt`,
        `products%2fshop%2fimages%2fmine.txt`,
        `products/shop/images/mine.txt%00`,
        `products/shop/images/mine.txt%00.png`,
        `products\\shop\\images\\mine.txt`,
        `products%5cshop%5cimages%5cmine.txt`,
        `products/shop/images/./mine.txt`,
        `products//shop/images/mine.txt`,
        `products/shop/images/%6d%69%6e%65.txt`,
      ];
      for (const path of attempts) {
        const res = await raw(assetUrl(path));
        expect(res.status, path).to.equal(404);
        expect(res.body.toString(), path).to.not.contain('public');
      }
      expect((await raw(assetUrl('products/shop/images/mine.txt'))).status).to.equal(200);
    });

    it('answers 304 when If-None-Match matches the ETag', async () => {
      await upload('cached', { filename: 'c.txt', visibility: 'public' });
      const first = await raw(assetUrl('products/shop/images/c.txt'));
      const etag = String(first.headers.etag);
      const again = await raw(assetUrl('products/shop/images/c.txt'), { headers: { 'If-None-Match': etag } });
      expect(again.status).to.equal(304);
      expect(again.body.length).to.equal(0);
      expect(again.headers.etag).to.equal(etag);
      const weak = await raw(assetUrl('products/shop/images/c.txt'), { headers: { 'If-None-Match': `"other", W/${etag}` } });
      expect(weak.status).to.equal(304);
      const stale = await raw(assetUrl('products/shop/images/c.txt'), { headers: { 'If-None-Match': '"stale"' } });
      expect(stale.status).to.equal(200);
    });

    it('answers 206 with Content-Range for a single Range, and 416 when it cannot be satisfied', async () => {
      const body = Buffer.from('0123456789abcdefghij');
      await upload(body, { filename: 'r.txt', visibility: 'public' });
      const url = assetUrl('products/shop/images/r.txt');
      const part = await raw(url, { headers: { Range: 'bytes=5-9' } });
      expect(part.status).to.equal(206);
      expect(part.body.toString()).to.equal('56789');
      expect(part.headers['content-range']).to.equal('bytes 5-9/20');
      expect(part.headers['content-length']).to.equal('5');
      const open = await raw(url, { headers: { Range: 'bytes=15-' } });
      expect(open.status).to.equal(206);
      expect(open.body.toString()).to.equal('fghij');
      const suffix = await raw(url, { headers: { Range: 'bytes=-3' } });
      expect(suffix.body.toString()).to.equal('hij');
      expect(suffix.headers['content-range']).to.equal('bytes 17-19/20');
      const beyond = await raw(url, { headers: { Range: 'bytes=20-30' } });
      expect(beyond.status).to.equal(416);
      expect(beyond.headers['content-range']).to.equal('bytes */20');
      expect(json(beyond).error.code).to.equal('range_not_satisfiable');
      const several = await raw(url, { headers: { Range: 'bytes=0-1,5-6' } });
      expect(several.status).to.equal(200);
      expect(several.body.equals(body)).to.equal(true);
    });
  });
}

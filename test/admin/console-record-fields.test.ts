import { crc32, deflateSync } from 'node:zlib';
import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, superadmin } from '../helpers/tokens.js';

/** A real PNG of `size`×`size` pixels of one colour (8-bit RGB, no filter). */
function png(size: number, [r, g, b]: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: size }, () => [r, g, b]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: size }, () => row)));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', pixels), chunk('IEND', Buffer.alloc(0))]);
}

/**
 * Storage keys in the console (issue 32; `x-storage-key`, docs/storage.md), in headless Chromium on TEST_DB's
 * engine: a product's images uploaded from its form through the storage API, shown as thumbnails after save and
 * reload, reordered and removed; a file that is not an image shown as a chip with its name. References (`x-ref`)
 * in a table: the referenced record's display field, linked, fetched in one request per page.
 */
describe('admin console: files, images and reference columns of records (headless Chromium)', function () {
  this.timeout(120_000);
  const suite = consoleSuite('files', TEST_KEY, async () => {
    const app = await startTestApp();
    return { app, tenant: await createTenant(app, 'files') };
  });
  let t: TestApp;
  let c: ConsoleDriver;
  let tenant: string;
  before(() => ({ app: t, c, tenant } = suite));

  const thumbnails = () => c.page.getByRole('group', { name: 'Images' }).getByRole('img');
  const altTexts = async () => (await thumbnails().evaluateAll((imgs) => imgs.map((i) => i.getAttribute('alt'))));

  it('uploads images from the form, shows them as thumbnails after save and reload, reorders and removes them', async () => {
    const admin = superadmin(tenant);
    const product = (await t.http.post('/api/v1/erp/products').set(admin).send({ sku: 'MUG-1', name: 'Blue mug', priceCents: 1250, physicalStock: 1 }).expect(201)).body.data;
    const { page } = c;
    await c.go(`/erp.product/${product.id}`);
    await page.getByRole('group', { name: 'Images' }).getByText('Upload files').waitFor();
    await page.locator('#imageKeys-upload').setInputFiles([
      { name: 'blue mug.png', mimeType: 'image/png', buffer: png(64, [20, 60, 200]) },
      { name: 'red-mug.png', mimeType: 'image/png', buffer: png(32, [200, 30, 30]) },
    ]);
    await thumbnails().nth(1).waitFor();
    expect(await altTexts()).to.deep.equal(['blue-mug.png', 'red-mug.png']);
    await c.checkA11y('files-edit');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(c.url('/erp.product'));

    // Stored as keys of public objects under erp/product, in the order shown.
    const saved = (await t.http.get(`/api/v1/data/erp/product/${product.id}`).set(admin).expect(200)).body.data.item;
    expect(saved.imageKeys).to.have.length(2);
    expect(saved.imageKeys[0]).to.match(new RegExp(`^tenants/${tenant}/products/erp/product/[0-9a-z]+-blue-mug\\.png$`));
    const path = saved.imageKeys[1].slice(`tenants/${tenant}/`.length);
    const asset = await t.http.get(`/api/v1/public/assets/${tenant}/${path}`).buffer(true).expect(200);
    expect(asset.headers['content-type']).to.match(/^image\/png/);
    expect(Buffer.compare(asset.body as Buffer, png(32, [200, 30, 30]))).to.equal(0);

    // After a reload, the record's page shows both thumbnails, loaded (the browser decoded the PNGs).
    await c.go(`/erp.product/${product.id}/show`);
    const shown = page.getByRole('img', { name: 'blue-mug.png' });
    await shown.waitFor();
    await page.waitForFunction("[...document.querySelectorAll('img')].filter((i) => i.alt.endsWith('mug.png') && i.complete && i.naturalWidth > 0).length === 2");
    expect(await shown.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).to.equal(64);
    await c.checkA11y('files-show');
    await screenshot(page, 'files-show');

    // Reorder (red first), remove the blue one: saved as shown.
    await c.go(`/erp.product/${product.id}`);
    await thumbnails().nth(1).waitFor();
    await page.getByRole('button', { name: 'Move red-mug.png left' }).click();
    expect(await altTexts()).to.deep.equal(['red-mug.png', 'blue-mug.png']);
    await screenshot(page, 'files-edit');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(c.url('/erp.product'));
    let stored = (await t.http.get(`/api/v1/data/erp/product/${product.id}`).set(admin).expect(200)).body.data.item;
    expect(stored.imageKeys).to.deep.equal([saved.imageKeys[1], saved.imageKeys[0]]);

    await c.go(`/erp.product/${product.id}`);
    await thumbnails().nth(1).waitFor();
    await page.getByRole('button', { name: 'Remove blue-mug.png' }).click();
    expect(await altTexts()).to.deep.equal(['red-mug.png']);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(c.url('/erp.product'));
    stored = (await t.http.get(`/api/v1/data/erp/product/${product.id}`).set(admin).expect(200)).body.data.item;
    expect(stored.imageKeys).to.deep.equal([saved.imageKeys[1]]);
  });

  it('shows a file that is not an image as a chip with its name, uploaded private', async () => {
    const admin = superadmin(tenant);
    await t.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'docs', name: 'contract', schema: {
        type: 'object', required: ['title'],
        properties: { title: { type: 'string' }, attachments: { type: 'array', title: 'Attachments', items: { type: 'string', 'x-storage-key': true } } },
      },
    }).expect(201);
    const contract = (await t.http.post('/api/v1/data/docs/contract').set(admin).send({ title: 'Lease' }).expect(201)).body.data.item;
    const { page } = c;
    await c.go(`/docs.contract/${contract.id}`);
    await page.locator('#attachments-upload').setInputFiles({ name: 'lease.pdf', mimeType: 'application/pdf', buffer: Buffer.from('%PDF-1.4\n%%EOF\n') });
    const group = page.getByRole('group', { name: 'Attachments' });
    await group.getByRole('link', { name: 'lease.pdf' }).waitFor();
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(c.url('/docs.contract'));
    const stored = (await t.http.get(`/api/v1/data/docs/contract/${contract.id}`).set(admin).expect(200)).body.data.item;
    expect(stored.attachments).to.have.length(1);
    // Private: not served as a public asset.
    await t.http.get(`/api/v1/public/assets/${tenant}/${stored.attachments[0].slice(`tenants/${tenant}/`.length)}`).expect(404);
    await c.go(`/docs.contract/${contract.id}/show`);
    await page.getByRole('link', { name: 'lease.pdf' }).waitFor();
    await c.checkA11y('files-chip');
  });

  it('refuses x-storage-key on a property that is not a string', async () => {
    const res = await t.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'docs', name: 'bad', schema: { type: 'object', properties: { size: { type: 'integer', 'x-storage-key': true } } },
    }).expect(400);
    expect(JSON.stringify(res.body)).to.contain('x-storage-key');
  });

  it('shows a reference column as the referenced record\'s display field, linked, with one request per page', async () => {
    const admin = superadmin(tenant);
    await t.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'shop', name: 'supplier', schema: {
        type: 'object', required: ['name'], 'x-display-field': 'name', properties: { code: { type: 'string' }, name: { type: 'string', title: 'Name' } },
      },
    }).expect(201);
    await t.http.post('/api/v1/metadata/schemas').set(admin).send({
      namespace: 'shop', name: 'part', schema: {
        type: 'object', required: ['title'], 'x-list-columns': ['title', 'supplierId'],
        properties: { title: { type: 'string', title: 'Title' }, supplierId: { type: 'string', title: 'Supplier', 'x-ref': 'shop.supplier' } },
      },
    }).expect(201);
    const suppliers: Array<{ id: string; name: string }> = [];
    for (let i = 0; i < 6; i++) {
      suppliers.push((await t.http.post('/api/v1/data/shop/supplier').set(admin).send({ code: `S${i}`, name: `Supplier ${i}` }).expect(201)).body.data.item);
    }
    // 30 parts, each of a supplier: a page of 25 rows names 6 suppliers.
    for (let i = 0; i < 30; i++) await t.http.post('/api/v1/data/shop/part').set(admin).send({ title: `Part ${String(i).padStart(2, '0')}`, supplierId: suppliers[i % 6].id }).expect(201);

    const { page } = c;
    const asked: string[] = [];
    const count = (req: { url(): string }) => { if (new URL(req.url()).pathname.startsWith('/api/v1/data/shop/supplier')) asked.push(decodeURIComponent(req.url())); };
    page.on('request', count);
    try {
      await c.go('/shop.part');
      const headers = (await page.getByRole('columnheader').allInnerTexts()).map((h) => h.trim()).filter(Boolean);
      expect(headers).to.deep.equal(['Title', 'Supplier']);
      const row = page.getByRole('row').filter({ hasText: 'Part 29' });
      const link = row.getByRole('link', { name: 'Supplier 5', exact: true });
      await link.waitFor();
      expect(await page.getByRole('row').getByRole('link', { name: /^Supplier \d$/ }).count()).to.equal(25);
      // One request for the page's suppliers, by id.
      expect(asked, asked.join('\n')).to.have.length(1);
      expect(asked[0]).to.contain('filter[id][in]=');
      await c.checkA11y('reference-column');
      await screenshot(page, 'reference-column');
      await link.click();
      await page.waitForURL(c.url(`/shop.supplier/${suppliers[5].id}/show`));
      await page.getByText('Supplier 5').first().waitFor();
    } finally {
      page.off('request', count);
    }
  });

  it('has no serious or critical accessibility violations on the files screens (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length(4);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});

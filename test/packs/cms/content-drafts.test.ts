import { expect } from 'chai';
import { createTenant, sharedTestApp, type TestApp } from '../../helpers/test-app.js';
import { as } from '../../helpers/tokens.js';

type Json = Record<string, any>;

/**
 * Drafts of CMS content (CONTRACT.md 17.1): the public runtime, knowledge search and export show the live pages
 * only; a publish updates them as any write does.
 */
describe('drafts of CMS pages: never public until published', () => {
  let t: TestApp;
  let tenant: string;
  const PAGES = '/api/v1/data/cms/page';
  const editor = () => as(tenant, 'editor');
  const publicPage = async (slug: string) => (await t.http.get(`/api/v1/public/tenant/${tenant}/content/page`).query({ slug }).expect(200)).body.data.items;
  const search = async (q: string) => (await t.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q }).expect(200)).body.data.items;
  const exported = async () => (await t.http.get(`${PAGES}/export`).set(editor()).expect(200)).text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Json);

  before(async () => {
    t = await sharedTestApp();
  });

  beforeEach(async () => {
    tenant = await createTenant(t, 'cd');
  });

  it('shows the live page on the public runtime, in knowledge and in export while a draft waits; the publish switches all three', async () => {
    const page = (await t.http.post(PAGES).set(editor()).send({ title: 'Opening hours', slug: 'hours', status: 'published', content: 'We open at eight.' }).expect(201)).body.data.item;
    await t.http.put(`${PAGES}/${page.id}/draft`).set(editor()).send({ content: 'We open at nine, says the zebra.' }).expect(200);

    expect((await publicPage('hours')).map((p: Json) => p.content)).to.deep.equal(['We open at eight.']);
    expect(await search('zebra')).to.have.length(0);
    expect((await search('eight')).map((h: Json) => h.title)).to.deep.equal(['Opening hours']);
    expect((await exported()).map((r) => r.content)).to.deep.equal(['We open at eight.']);

    await t.http.post(`${PAGES}/${page.id}/draft/publish`).set(editor()).expect(200);
    expect((await publicPage('hours')).map((p: Json) => p.content)).to.deep.equal(['We open at nine, says the zebra.']);
    expect((await search('zebra')).map((h: Json) => h.title)).to.deep.equal(['Opening hours']);
    expect(await search('eight')).to.have.length(0);
    expect((await exported()).map((r) => r.content)).to.deep.equal(['We open at nine, says the zebra.']);
  });

  it('keeps a draft-only page out of the public runtime, knowledge and export until its first publish', async () => {
    const { item } = (await t.http.post(`${PAGES}?draft=true`).set(editor()).send({ title: 'Campaign', slug: 'campaign', status: 'published', content: 'Flamingo sale.' }).expect(201)).body.data;
    expect(await publicPage('campaign')).to.deep.equal([]);
    expect(await search('flamingo')).to.deep.equal([]);
    expect(await exported()).to.deep.equal([]);
    await t.http.post(`${PAGES}/${item.id}/draft/publish`).set(editor()).expect(200);
    expect((await publicPage('campaign')).map((p: Json) => p.title)).to.deep.equal(['Campaign']);
    expect((await search('flamingo')).map((h: Json) => h.title)).to.deep.equal(['Campaign']);
  });

  it('the CMS content types ask for drafts, form submissions do not', async () => {
    const items = (await t.http.get('/api/v1/metadata/schemas?namespace=cms').set(as(tenant, 'viewer')).expect(200)).body.data.items as Json[];
    const drafts = Object.fromEntries(items.map((s) => [s.name, s.workflow?.drafts === true]));
    expect(drafts).to.include({ page: true, post: true, form: true, form_submission: false });
  });
});

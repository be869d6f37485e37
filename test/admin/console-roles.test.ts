import { expect } from 'chai';
import { consoleSuite, screenshot, screensWithViolations, type ConsoleDriver } from '../helpers/browser.js';
import { createTenant, startTestApp, type TestApp } from '../helpers/test-app.js';
import { TEST_KEY, bearer, signToken, superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

type Json = Record<string, any>;

/**
 * The console's role editor over the roles API of CONTRACT 16.1 (headless Chromium, TEST_DB's engine): a role made
 * with the pickers limits a member's JWT and one made as JSON limits an API token, through HTTP; name rules and a
 * stale save show where they belong; a held role is not deleted and says by what.
 */
describe('admin console: the role editor (headless Chromium)', function () {
  this.timeout(180_000);
  const suite = consoleSuite('roles', TEST_KEY, async () => {
    const app = await startTestApp();
    const tenant = await createTenant(app, 'roles');
    await app.http.post('/api/v1/metadata/schemas').set(superadmin(tenant)).send({
      namespace: 'blog', name: 'post',
      schema: { type: 'object', required: ['title'], properties: { title: { type: 'string' }, owner: { type: 'string' }, costCents: { type: 'integer' } } },
    }).expect(201);
    for (const [title, owner] of [['Alice one', 'alice'], ['Alice two', 'alice'], ['Bob one', 'bob']]) {
      await app.http.post('/api/v1/data/blog/post').set(superadmin(tenant)).send({ title, owner, costCents: 500 }).expect(201);
    }
    return { app, tenant };
  });
  let t: TestApp;
  let c: ConsoleDriver;
  let tenant: string;
  beforeEach(() => ({ c, app: t, tenant } = suite));
  const member = (sub: string) => bearer(signToken({ tenantId: tenant, roles: ['role:author'], sub }));
  const roleOf = async (name: string): Promise<Json> => (await t.http.get(`/api/v1/tenants/${tenant}/roles/${name}`).set(superadmin(tenant)).expect(200)).body.data;

  it('builds a role with the pickers (resource, actions, a $user.sub filter, field lists) that then limits a member', async () => {
    const { page } = c;
    await c.go('/roles');
    await page.getByTestId('role-row').filter({ hasText: 'viewer' }).waitFor();
    expect(await page.getByTestId('role-row').allInnerTexts()).to.have.length(3);
    await c.checkA11y('roles');
    await page.getByRole('link', { name: 'New role' }).click();

    await page.locator('#role-name').fill('admin');
    await page.locator('#role-description').fill('Writes their own posts');
    await page.locator('#policy-0-resource').click();
    await page.getByRole('option', { name: 'blog.post', exact: true }).click();
    const policy = page.getByRole('group', { name: 'Policy 1', exact: true });
    await policy.getByRole('checkbox', { name: 'create' }).check();
    await policy.getByRole('checkbox', { name: 'update' }).check();
    await policy.getByRole('button', { name: 'Add a condition' }).click();
    await page.locator('#policy-0-cond-0-field').click();
    await page.getByRole('option', { name: 'owner', exact: true }).click();
    await page.locator('#policy-0-cond-0-value').fill('$user.sub');
    const readable = policy.getByRole('group', { name: 'Readable fields' });
    await readable.getByRole('checkbox', { name: 'All fields' }).uncheck();
    await readable.getByRole('checkbox', { name: 'title' }).check();
    await readable.getByRole('checkbox', { name: 'owner' }).check();
    const writable = policy.getByRole('group', { name: 'Writable fields' });
    await writable.getByRole('checkbox', { name: 'All fields' }).uncheck();
    await writable.getByRole('checkbox', { name: 'title' }).check();
    await writable.getByRole('checkbox', { name: 'owner' }).check();

    // A reserved name: the API's 400 shows at the name field, nothing is saved.
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.locator('#role-name-helper-text').filter({ hasText: 'reserved' }).waitFor();
    await c.checkA11y('role-editor-invalid');
    await screenshot(page, 'role-editor');
    await page.locator('#role-name').fill('author');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByTestId('role-row').filter({ hasText: 'author' }).waitFor();

    // The pickers list the fields in the schema's order, which the engine's JSON may change: compared as sets.
    const [saved] = (await roleOf('author')).policies;
    expect({ ...saved, fields: { read: [...saved.fields.read].sort(), write: [...saved.fields.write].sort() } }).to.deep.equal({
      resource: 'blog.post', actions: ['read', 'create', 'update'], filter: { owner: '$user.sub' }, fields: { read: ['owner', 'title'], write: ['owner', 'title'] },
    });
    const list = (await t.http.get('/api/v1/data/blog/post?sort=title').set(member('alice')).expect(200)).body.data;
    expect(list.items.map((p: Json) => p.title)).to.deep.equal(['Alice one', 'Alice two']);
    expect(list.items[0]).not.to.have.property('costCents');
    const created = (await t.http.post('/api/v1/data/blog/post').set(member('alice')).send({ title: 'Alice three' }).expect(201)).body.data.item;
    expect(created.owner).to.equal('alice');
    expect((await t.http.post('/api/v1/data/blog/post').set(member('alice')).send({ title: 'Costly', costCents: 1 })).status).to.equal(403);
    expect((await t.http.get('/api/v1/data/blog/post?filter[owner]=bob').set(member('alice')).expect(200)).body.data.items).to.deep.equal([]);
  });

  it('edits a role with If-Match: a change made meanwhile is not overwritten', async () => {
    const { page } = c;
    await c.go('/roles/author/edit');
    await page.locator('#role-description').fill('Stale edit');
    const current = await roleOf('author');
    await t.http.put(`/api/v1/tenants/${tenant}/roles/author`).set(superadmin(tenant)).send({ description: 'Changed meanwhile', policies: current.policies }).expect(200);
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByRole('alert').filter({ hasText: 'Someone else changed this role' }).waitFor();
    expect((await roleOf('author')).description).to.equal('Changed meanwhile');

    await c.go('/roles/author/edit');
    await waitUntil('the role read again', async () => (await page.locator('#role-description').inputValue()) === 'Changed meanwhile');
    await page.locator('#role-description').fill('Writes their own posts');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByTestId('role-row').filter({ hasText: 'Writes their own posts' }).waitFor();
    expect(await roleOf('author')).to.include({ description: 'Writes their own posts', version: 3 });
  });

  it('writes a role as JSON that limits an API token made in the console; a held role is not deleted, a free one is', async () => {
    const { page } = c;
    await c.go('/roles/new');
    await page.locator('#role-name').fill('partner');
    await page.getByLabel('Edit the policies as JSON').check();
    await page.locator('#role-json').fill(JSON.stringify([{ resource: 'blog.post', actions: ['read'], filter: { costCents: { gte: 100 } }, fields: { read: ['title', 'nope'] } }]));
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.locator('#role-json-helper-text').filter({ hasText: '/policies/0/fields/read/1' }).waitFor();
    await page.locator('#role-json').fill(JSON.stringify([{ resource: 'blog.post', actions: ['read'], filter: { costCents: { gte: 100 } }, fields: { read: ['title'] } }]));
    // Back to the pickers and again to JSON: the policy survives the round trip.
    await page.getByLabel('Edit the policies as JSON').uncheck();
    expect(await page.locator('#policy-0-cond-0-value').inputValue()).to.equal('100');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByTestId('role-row').filter({ hasText: 'partner' }).waitFor();
    expect((await roleOf('partner')).policies).to.deep.equal([{ resource: 'blog.post', actions: ['read'], filter: { costCents: { gte: 100 } }, fields: { read: ['title'] } }]);

    await c.go('/api-tokens');
    await page.locator('#token-name').fill('Partner feed');
    await page.locator('#token-role').click();
    await page.getByRole('option', { name: 'partner' }).click();
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = (await page.getByTestId('token-secret').innerText()).trim();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const items = (await t.http.get('/api/v1/data/blog/post?sort=title').set(bearer(secret)).expect(200)).body.data.items;
    expect(items).to.have.length(3);
    for (const item of items) expect(Object.keys(item).sort()).to.deep.equal(['createdAt', 'id', 'title', 'updatedAt', 'version']);
    expect((await t.http.post('/api/v1/data/blog/post').set(bearer(secret)).send({ title: 'x' })).status).to.equal(403);

    await c.go('/roles');
    await page.getByRole('button', { name: 'Delete partner' }).click();
    await c.checkA11y('role-delete');
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('alert').filter({ hasText: 'held by an API token' }).waitFor();
    expect(await page.getByTestId('role-row').filter({ hasText: 'partner' }).count()).to.equal(1);

    await page.getByRole('button', { name: 'Delete author' }).click();
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByTestId('role-row').filter({ hasText: 'author' }).waitFor({ state: 'detached' });
    await t.http.get(`/api/v1/tenants/${tenant}/roles/author`).set(superadmin(tenant)).expect(404);
  });

  it('has no serious or critical accessibility violations on these screens (axe-core)', () => {
    expect(Object.keys(c.violations)).to.have.length(3);
    expect(screensWithViolations(c.violations)).to.deep.equal([]);
  });
});

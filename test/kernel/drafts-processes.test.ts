import { expect } from 'chai';
import { serviceProcessesOnOneDatabase, type ServiceProcess } from '../helpers/service-process.js';
import { superadmin } from '../helpers/tokens.js';
import { waitUntil } from '../helpers/wait.js';

type Json = Record<string, any>;

/** Scheduled publishes and releases with several service processes on one database (CONTRACT.md 17.1, 17.3): each published once, by one. */
describe('scheduled publishes with two service processes on one database', function () {
  this.timeout(120_000);
  const { services } = serviceProcessesOnOneDatabase(2);

  /** A new tenant with a `wf.note` schema that has drafts; its superadmin's headers. */
  const tenantWithNotes = async (service: ServiceProcess, prefix: string) => {
    const tenant = `${prefix}-${Date.now().toString(36)}`;
    await service.http.post('/api/v1/admin/tenants').set(superadmin()).send({ id: tenant, name: prefix }).expect(201);
    const as = superadmin(tenant);
    await service.http.post('/api/v1/metadata/schemas').set(as).send({
      namespace: 'wf', name: 'note', workflow: { drafts: true }, schema: { type: 'object', properties: { title: { type: 'string' } } },
    }).expect(201);
    return as;
  };

  it('publishes each scheduled draft once, within 30 s after its time', async () => {
    const [one, two] = services;
    const as = await tenantWithNotes(one, 'sched');
    const ids: string[] = [];
    for (let n = 0; n < 6; n++) ids.push((await one.http.post('/api/v1/data/wf/note').set(as).send({ title: `live ${n}` }).expect(201)).body.data.item.id);
    const at = new Date(Date.now() + 2000).toISOString();
    for (const [n, id] of ids.entries()) {
      const service = n % 2 ? one : two;
      await service.http.put(`/api/v1/data/wf/note/${id}/draft`).set(as).send({ title: `scheduled ${n}` }).expect(200);
      await service.http.post(`/api/v1/data/wf/note/${id}/draft/publish`).set(as).send({ at }).expect(200);
    }
    await waitUntil('every scheduled publish', async () => {
      const list = await two.http.get('/api/v1/data/wf/note?limit=50').set(as).expect(200);
      return list.body.data.items.every((i: Json) => i.version === 2);
    }, 40_000);
    expect(Date.now()).to.be.below(Date.parse(at) + 30_000);
    for (const [n, id] of ids.entries()) {
      const revisions = (await one.http.get(`/api/v1/data/wf/note/${id}/revisions`).set(as).expect(200)).body.data.items;
      expect(revisions.map((r: Json) => `${r.version}:${r.action}:${r.data.title}`)).to.deep.equal([`2:update:scheduled ${n}`, `1:create:live ${n}`]);
      expect((await two.http.get(`/api/v1/data/wf/note/${id}/draft`).set(as)).status).to.equal(404);
    }
  });

  it('publishes a scheduled release once, within 30 s after its time', async () => {
    const [one, two] = services;
    const as = await tenantWithNotes(one, 'rel');
    const release = (await one.http.post('/api/v1/releases').set(as).send({ name: 'Midnight' }).expect(201)).body.data;
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) {
      const id = (await one.http.post('/api/v1/data/wf/note').set(as).send({ title: `live ${n}` }).expect(201)).body.data.item.id;
      await two.http.put(`/api/v1/data/wf/note/${id}/draft`).set(as).send({ title: `released ${n}` }).expect(200);
      await two.http.post(`/api/v1/releases/${release.id}/items`).set(as).send({ namespace: 'wf', schema: 'note', id }).expect(200);
      ids.push(id);
    }
    const at = new Date(Date.now() + 2000).toISOString();
    await one.http.post(`/api/v1/releases/${release.id}/publish`).set(as).send({ at }).expect(200);
    const published = await waitUntil('the scheduled release', async () => {
      const res = await two.http.get(`/api/v1/releases/${release.id}`).set(as).expect(200);
      return res.body.data.status === 'published' && res.body.data;
    }, 40_000);
    expect(Date.now()).to.be.below(Date.parse(at) + 30_000);
    expect(published.items.map((i: Json) => i.version)).to.deep.equal([2, 2, 2, 2]);
    for (const id of ids) {
      const revisions = (await one.http.get(`/api/v1/data/wf/note/${id}/revisions`).set(as).expect(200)).body.data.items;
      expect(revisions.map((r: Json) => r.version)).to.deep.equal([2, 1]);
    }
  });
});

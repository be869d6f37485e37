import { readFileSync } from 'node:fs';
import { fromRoot, mergePatchSchema, type PackContext, type PackRouter } from '../../core/pack-api.js';
import type { ProfileKind } from './tenant-documents.service.js';

/** A document schema of schemas/tenant-admin (site config, branding), without its $id. */
export function documentSchema(file: string): Record<string, unknown> {
  const { $id: _id, ...schema } = JSON.parse(readFileSync(fromRoot('schemas', 'tenant-admin', file), 'utf8'));
  return schema;
}

const RESOURCES: Array<{ path: string; kind: ProfileKind; label: string; file: string }> = [
  { path: 'site-config', kind: 'site_config', label: 'site config', file: 'site-config.schema.json' },
  { path: 'branding', kind: 'branding', label: 'branding', file: 'branding.schema.json' },
];

/** Site config and branding: GET for members, JSON merge patch for admins, validated by schemas/tenant-admin. */
export function siteProfileRoutes(router: PackRouter, pack: PackContext): void {
  const documents = pack.use('tenant-admin.documents');
  for (const { path, kind, label, file } of RESOURCES) {
    const schema = documentSchema(file);
    router.get(`/tenants/:id/${path}`, {
      summary: `Read the ${label}`, tags: ['tenants'], auth: 'tenant', tenantParam: 'id', response: schema,
      errors: ['unauthenticated', 'forbidden', 'tenant_not_found'],
    }, (ctx) => documents.get(null, ctx.state.tenant!, kind));

    router.patch(`/tenants/:id/${path}`, {
      summary: `Change the ${label}`,
      description: `A JSON merge patch (RFC 7396; null removes a key), validated after merging against schemas/tenant-admin/${file}. Unknown keys answer 400.`,
      tags: ['tenants'], auth: 'tenant', tenantParam: 'id', role: 'admin', body: mergePatchSchema(schema), response: schema,
      errors: ['validation_failed', 'invalid_json', 'unauthenticated', 'forbidden', 'tenant_not_found'],
    }, (ctx) => pack.audit.within(ctx.state.rc, { action: `${kind}.updated`, target: kind }, (rc) => documents.patch(rc, ctx.state.tenant!, kind, ctx.state.body)));
  }
}

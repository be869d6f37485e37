import { Show, useRecordContext } from 'react-admin';
import { Box, Link, Typography } from '@mui/material';
import type { SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { pascal, typeScriptOf } from './field-builder.js';

function Code({ label, children }: { label: string; children: string }) {
  return (
    <Box component="section" aria-label={label} sx={{ mb: 2 }}>
      <Typography component="h3" variant="subtitle1">{label}</Typography>
      <Box component="pre" sx={{ bgcolor: 'grey.100', color: 'grey.900', p: 1.5, borderRadius: 1, overflow: 'auto', fontSize: 13 }}>{children}</Box>
    </Box>
  );
}

function SchemaDetails() {
  const s = useRecordContext<SchemaItem & { id: string }>();
  if (!s) return null;
  const base = `${window.location.origin}/api/v1`;
  const path = `${base}/data/${s.namespace}/${s.name}`;
  const tenant = session.tenant ?? '<tenant>';
  const type = pascal(`${s.namespace}_${s.name}`);
  const example = Object.fromEntries(Object.entries(s.schema.properties ?? {}).filter(([n]) => (s.schema.required ?? []).includes(n))
    .map(([n, p]) => [n, p.enum ? p.enum[0] : p.type === 'integer' || p.type === 'number' ? 1 : p.type === 'boolean' ? true : 'text']));
  return (
    <Box sx={{ p: 2 }}>
      <Typography component="h2" variant="h6">{s.namespace}.{s.name} <small>(version {s.version}, {s.scope})</small></Typography>
      <Typography sx={{ mb: 2 }}>
        Indexes: {s.indexes?.length ? s.indexes.map((i) => i.join(', ')).join('; ') : 'none'} · Unique: {s.unique?.length ? s.unique.map((i) => i.join(', ')).join('; ') : 'none'}
        {' · '}<Link href={`/admin/${s.namespace}.${s.name}`}>Records</Link>
      </Typography>
      <Code label="TypeScript type">{typeScriptOf(type, s.schema)}</Code>
      {/* Pasted into a shell as shown: the headers in double quotes so that $TOKEN expands, the body in single quotes. */}
      <Code label="curl">{[
        `export TOKEN="<your token>"  # e.g. from: npm run token -- --tenant ${tenant} --role admin`,
        `curl -s -X POST "${path}" -H "Authorization: Bearer $TOKEN" -H "X-Tenant-Id: ${tenant}" \\`,
        `  -H "Content-Type: application/json" -d '${JSON.stringify(example).replaceAll("'", "'\\''")}'`,
        `curl -s -g "${path}?sort=-createdAt&limit=20" -H "Authorization: Bearer $TOKEN" -H "X-Tenant-Id: ${tenant}"`,
      ].join('\n')}</Code>
      <Code label="fetch">{[
        `const headers = { Authorization: \`Bearer \${token}\`, 'X-Tenant-Id': '${tenant}', 'Content-Type': 'application/json' };`,
        `const created = await fetch('${path}', { method: 'POST', headers, body: JSON.stringify(${JSON.stringify(example)}) });`,
        `const { data: { item } } = await created.json() as { data: { item: ${type} } };`,
        `const page = await fetch('${path}?limit=20', { headers }).then((r) => r.json());`,
      ].join('\n')}</Code>
      <Code label="JSON Schema">{JSON.stringify(s.schema, null, 2)}</Code>
    </Box>
  );
}

export function SchemaShow() {
  return <Show title="Schema"><SchemaDetails /></Show>;
}

import { useState } from 'react';
import { Show, useNotify, useRecordContext, useRedirect } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Link, TextField, Typography } from '@mui/material';
import { call, isApiError } from '../api/client.js';
import { refreshSchemas, type SchemaItem } from '../api/schemas.js';
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
      {session.can('admin') && s.scope === 'tenant' && !s.sealed && (
        <Box sx={{ display: 'flex', gap: 1, my: 1 }}>
          <Button variant="outlined" component={RouterLink} to={`/schemas/${s.namespace}.${s.name}`}>Change schema</Button>
          <DeleteSchema schema={s} />
        </Box>
      )}
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

/**
 * Deleting a schema deletes every record of it: the admin types its name to confirm; sent with If-Match (the
 * version shown), so a schema changed meanwhile is not deleted unseen.
 */
function DeleteSchema({ schema }: { schema: SchemaItem }) {
  const notify = useNotify();
  const redirect = useRedirect();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<string | null>(null);
  const fullName = `${schema.namespace}.${schema.name}`;
  const remove = async () => {
    try {
      await call(`/metadata/schemas/${schema.namespace}/${schema.name}`, { method: 'DELETE', headers: { 'If-Match': `"${schema.version}"` } });
      await refreshSchemas();
      notify(`Schema ${fullName} and its records deleted`, { type: 'success' });
      redirect('/schemas');
    } catch (err) {
      setError(isApiError(err) ? (err.status === 412 ? `${err.message}: the schema changed since this page was opened; reload it.` : err.message) : String(err));
    }
  };
  return (
    <>
      <Button color="error" variant="outlined" onClick={() => setOpen(true)}>Delete schema</Button>
      <Dialog open={open} onClose={() => setOpen(false)} aria-labelledby="delete-schema-title">
        <DialogTitle id="delete-schema-title">Delete {fullName}?</DialogTitle>
        <DialogContent>
          <Alert severity="error" sx={{ mb: 2 }}>This deletes the schema and every record of it. It cannot be undone.</Alert>
          <TextField id="delete-schema-confirm" label={`Type ${fullName} to confirm`} value={typed} onChange={(e) => setTyped(e.target.value)} fullWidth autoFocus />
          {error && <Alert severity="error" sx={{ mt: 2 }}>{error}</Alert>}
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          <Button color="error" variant="contained" disabled={typed !== fullName} onClick={() => void remove()}>Delete schema and records</Button>
        </DialogActions>
      </Dialog>
    </>
  );
}

export function SchemaShow() {
  return <Show title="Schema"><SchemaDetails /></Show>;
}

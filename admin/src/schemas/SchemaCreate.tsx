import { useState } from 'react';
import { Title, useNotify, useRedirect } from 'react-admin';
import { useParams } from 'react-router-dom';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, CircularProgress, FormControlLabel, IconButton, MenuItem, TextField, Typography,
} from '@mui/material';
import { type ApiError, api, call, isApiError, type Issue } from '../api/client.js';
import { refreshSchemas, type SchemaItem } from '../api/schemas.js';
import { useApi } from '../common/hooks.js';
import { FIELD_TYPES, FORMATS, emptyRow, parseFieldLists, rowsOf, schemaOf, type FieldRow } from './field-builder.js';

/** Register a schema: a visual field builder and the raw JSON Schema side by side, kept in step. */
export function SchemaCreate() {
  return <SchemaEditor />;
}

/** Change a schema (admins): the same builder on its current version, sent with If-Match (see SchemaEditor). */
export function SchemaEdit() {
  const { id = '' } = useParams();
  const { data, error } = useApi<{ item: SchemaItem }>(`/metadata/schemas/${id.replace('.', '/')}`);
  if (error) return <Alert severity="error" sx={{ mt: 2 }}>{error.message}</Alert>;
  return data ? <SchemaEditor key={`${id}@${data.item.version}`} existing={data.item} /> : <Typography sx={{ p: 2 }}>Loading the schema…</Typography>;
}

const listsText = (lists: string[][] | undefined) => (lists ?? []).map((l) => l.join(', ')).join('; ');

/**
 * The schema builder. Without `existing` it registers a new schema (POST). With it, it registers the next version
 * (PUT with If-Match: the version it was opened on): a compatible change applies at once; one that stored records
 * do not match answers 409 schema_incompatible naming them, and the editor then offers `migrate` (fields to set on
 * every record, fields to remove) and runs the change with it, showing it at work until the new version is live.
 */
function SchemaEditor({ existing }: { existing?: SchemaItem }) {
  const notify = useNotify();
  const redirect = useRedirect();
  const [namespace, setNamespace] = useState(existing?.namespace ?? '');
  const [name, setName] = useState(existing?.name ?? '');
  const [title, setTitle] = useState(existing?.title ?? '');
  const [rows, setRows] = useState<FieldRow[]>(() => (existing ? rowsOf(existing.schema) ?? [] : [{ ...emptyRow(), name: 'title', required: true }]));
  const [json, setJson] = useState(() => JSON.stringify(existing ? existing.schema : schemaOf(rows), null, 2));
  const [jsonError, setJsonError] = useState<string | null>(existing && !rowsOf(existing.schema) ? 'The builder cannot show this schema; edit its JSON.' : null);
  const [indexes, setIndexes] = useState(listsText(existing?.indexes));
  const [unique, setUnique] = useState(listsText(existing?.unique));
  const [issues, setIssues] = useState<Issue[]>([]);
  const [message, setMessage] = useState<string | null>(null);
  const [incompatible, setIncompatible] = useState<ApiError | null>(null);
  const [migrateSet, setMigrateSet] = useState('{}');
  const [migrateUnset, setMigrateUnset] = useState('');
  const [running, setRunning] = useState(false);

  const updateRows = (next: FieldRow[]) => {
    setRows(next);
    setJson(JSON.stringify(schemaOf(next), null, 2));
    setJsonError(null);
  };
  const updateRow = (i: number, patch: Partial<FieldRow>) => updateRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const updateJson = (text: string) => {
    setJson(text);
    try {
      const parsed = JSON.parse(text);
      const back = rowsOf(parsed);
      setJsonError(back ? null : 'The builder cannot show this schema; it is sent as written.');
      if (back) setRows(back);
    } catch (err) {
      setJsonError(`Not valid JSON: ${(err as Error).message}`);
    }
  };

  /** The server's message for a path, e.g. /name or /schema/properties/price. */
  const issueAt = (prefix: string) => issues.find((i) => i.path === prefix || i.path.startsWith(`${prefix}/`))?.message;
  const rowIssue = (row: FieldRow) => (row.name ? issueAt(`/schema/properties/${row.name}`) : undefined);
  const otherIssues = issues.filter((i) => !['/namespace', '/name', '/indexes', '/unique'].some((p) => i.path.startsWith(p))
    && !rows.some((r) => r.name && i.path.startsWith(`/schema/properties/${r.name}`)));

  const submit = async (withMigrate = false) => {
    setIssues([]);
    setMessage(null);
    let schema: unknown;
    try {
      schema = JSON.parse(json);
    } catch (err) {
      setJsonError(`Not valid JSON: ${(err as Error).message}`);
      return;
    }
    const body: Record<string, unknown> = existing ? { schema } : { namespace: namespace.trim(), name: name.trim(), schema };
    if (title.trim()) body.title = title.trim();
    if (indexes.trim() || existing) body.indexes = parseFieldLists(indexes);
    if (unique.trim() || existing) body.unique = parseFieldLists(unique);
    if (withMigrate) {
      try {
        body.migrate = { set: JSON.parse(migrateSet || '{}'), unset: migrateUnset.split(',').map((f) => f.trim()).filter(Boolean) };
      } catch (err) {
        setMessage(`"Set on every record" is not valid JSON: ${(err as Error).message}`);
        return;
      }
    }
    const ns = existing?.namespace ?? body.namespace;
    const nm = existing?.name ?? body.name;
    setRunning(true);
    try {
      if (existing) {
        const { data } = await call<{ item: SchemaItem }>(`/metadata/schemas/${existing.namespace}/${existing.name}`, {
          method: 'PUT', body, headers: { 'If-Match': `"${existing.version}"` },
        });
        notify(`Schema ${ns}.${nm} is at version ${data.item.version}${withMigrate ? ', its records migrated' : ''}`, { type: 'success' });
      } else {
        await api('/metadata/schemas', { method: 'POST', body });
        notify(`Schema ${ns}.${nm} registered`, { type: 'success' });
      }
      await refreshSchemas();
      redirect(`/schemas/${ns}.${nm}/show`);
    } catch (err) {
      if (!isApiError(err)) throw err;
      if (err.code === 'schema_incompatible') {
        setIncompatible(err);
        return;
      }
      setMessage(err.status === 412 ? `${err.message}: someone changed this schema since you opened it; reload the page to edit its latest version.` : err.message);
      setIssues(err.issues.length ? err.issues : issuesOf(err));
    } finally {
      setRunning(false);
    }
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title={existing ? `Change ${existing.namespace}.${existing.name}` : 'New schema'} />
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>
          {existing ? `Change ${existing.namespace}.${existing.name} (version ${existing.version})` : 'Register a schema'}
        </Typography>
        {existing && (
          <Typography gutterBottom>
            A compatible change (a new optional field, a limit widened, a title) applies at once. Any other is checked against every stored
            record first; if some do not match, you are shown which, and can bring them along.
          </Typography>
        )}
        <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', mb: 2 }}>
          <TextField id="schema-namespace" label="Namespace" value={namespace} onChange={(e) => setNamespace(e.target.value)}
            slotProps={{ htmlInput: { readOnly: !!existing } }}
            error={!!issueAt('/namespace')} helperText={issueAt('/namespace') ?? 'e.g. shop (a-z, 0-9, _)'} />
          <TextField id="schema-name" label="Name" value={name} onChange={(e) => setName(e.target.value)}
            slotProps={{ htmlInput: { readOnly: !!existing } }}
            error={!!issueAt('/name')} helperText={issueAt('/name') ?? 'e.g. product'} />
          <TextField id="schema-title" label="Title" value={title} onChange={(e) => setTitle(e.target.value)} helperText="Shown in the menu" />
        </Box>
        <Box sx={{ display: 'grid', gridTemplateColumns: { lg: '3fr 2fr' }, gap: 2 }}>
          <Box component="section" aria-label="Field builder">
            <Typography component="h3" variant="subtitle1">Fields</Typography>
            {rows.map((row, i) => (
              <Box key={i} data-testid={`field-row-${i}`} sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center', py: 1, borderBottom: 1, borderColor: 'divider' }}>
                <TextField size="small" id={`field-${i}-name`} label="Field name" value={row.name} onChange={(e) => updateRow(i, { name: e.target.value })}
                  error={!!rowIssue(row)} helperText={rowIssue(row)} sx={{ width: 150 }} />
                <TextField size="small" select id={`field-${i}-type`} label="Type" value={row.type} onChange={(e) => updateRow(i, { type: e.target.value as FieldRow['type'] })} sx={{ width: 110 }}>
                  {FIELD_TYPES.map((t) => <MenuItem key={t} value={t}>{t}</MenuItem>)}
                </TextField>
                <FormControlLabel control={<Checkbox checked={row.array} onChange={(e) => updateRow(i, { array: e.target.checked })} />} label="Array of" />
                <FormControlLabel control={<Checkbox checked={row.required} onChange={(e) => updateRow(i, { required: e.target.checked })} />} label="Required" />
                <TextField size="small" id={`field-${i}-enum`} label="Allowed values" value={row.enum} onChange={(e) => updateRow(i, { enum: e.target.value })} sx={{ width: 150 }} placeholder="a, b, c" />
                <TextField size="small" id={`field-${i}-min`} label="Min" type="number" value={row.min} onChange={(e) => updateRow(i, { min: e.target.value })} sx={{ width: 80 }} />
                <TextField size="small" id={`field-${i}-max`} label="Max" type="number" value={row.max} onChange={(e) => updateRow(i, { max: e.target.value })} sx={{ width: 80 }} />
                <TextField size="small" select id={`field-${i}-format`} label="Format" value={row.format} onChange={(e) => updateRow(i, { format: e.target.value })} sx={{ width: 120 }} disabled={row.type !== 'string'}>
                  {FORMATS.map((f) => <MenuItem key={f} value={f}>{f || '(none)'}</MenuItem>)}
                </TextField>
                <IconButton aria-label={`Remove field ${row.name || i + 1}`} onClick={() => updateRows(rows.filter((_, j) => j !== i))}>✕</IconButton>
              </Box>
            ))}
            <Button sx={{ mt: 1 }} onClick={() => updateRows([...rows, emptyRow()])}>Add field</Button>
            <Box sx={{ display: 'flex', gap: 2, mt: 2, flexWrap: 'wrap' }}>
              <TextField id="schema-indexes" label="Indexes" value={indexes} onChange={(e) => setIndexes(e.target.value)}
                error={!!issueAt('/indexes')} helperText={issueAt('/indexes') ?? 'fields separated by commas, indexes by semicolons: sku; status, createdAt'} sx={{ flex: 1 }} />
              <TextField id="schema-unique" label="Unique" value={unique} onChange={(e) => setUnique(e.target.value)}
                error={!!issueAt('/unique')} helperText={issueAt('/unique') ?? 'e.g. sku'} sx={{ flex: 1 }} />
            </Box>
          </Box>
          <Box component="section" aria-label="JSON Schema">
            <TextField id="schema-json" label="JSON Schema" multiline minRows={16} fullWidth value={json} onChange={(e) => updateJson(e.target.value)}
              error={!!jsonError || otherIssues.length > 0} helperText={jsonError ?? 'Edit either side; the other follows.'}
              slotProps={{ htmlInput: { style: { fontFamily: 'monospace', fontSize: 13 }, spellCheck: false } }} />
          </Box>
        </Box>
        {message && (
          <Alert severity="error" role="alert" sx={{ mt: 2 }}>
            {message}
            {otherIssues.map((i) => <div key={i.path + i.message}><code>{i.path || '/'}</code>: {i.message}</div>)}
          </Alert>
        )}
        {incompatible && (
          <Box component="section" aria-label="Incompatible change" sx={{ mt: 2 }}>
            <Alert severity="warning" role="alert">
              Not compatible: {incompatible.message}
              {(incompatible.issues as Array<Issue & { id?: string }>).map((i) => (
                <div key={`${i.id}${i.path}`} data-testid="incompatible-record"><code>{i.id ?? ''}</code> <code>{i.path || '/'}</code>: {i.message}</div>
              ))}
            </Alert>
            <Typography sx={{ mt: 1 }}>Bring the stored records along: values to set on every record, fields to remove from every record.</Typography>
            <Box sx={{ display: 'flex', gap: 2, mt: 1, flexWrap: 'wrap' }}>
              <TextField id="migrate-set" label="Set on every record (JSON)" value={migrateSet} onChange={(e) => setMigrateSet(e.target.value)} sx={{ flex: 1 }}
                helperText='e.g. { "status": "active" }' slotProps={{ htmlInput: { style: { fontFamily: 'monospace' }, spellCheck: false } }} />
              <TextField id="migrate-unset" label="Remove from every record" value={migrateUnset} onChange={(e) => setMigrateUnset(e.target.value)} sx={{ flex: 1 }}
                helperText="fields separated by commas" />
            </Box>
            <Button variant="contained" color="error" sx={{ mt: 1 }} disabled={running} onClick={() => void submit(true)}>Change and migrate the records</Button>
          </Box>
        )}
        {running && (
          <Box role="status" sx={{ display: 'flex', alignItems: 'center', gap: 1, mt: 2 }}>
            <CircularProgress size={20} aria-hidden />
            <Typography>{existing ? 'Checking and migrating the stored records; writes to this schema wait until the new version is live…' : 'Registering…'}</Typography>
          </Box>
        )}
        <Button variant="contained" sx={{ mt: 2 }} disabled={running} onClick={() => void submit()}>{existing ? 'Save the change' : 'Register schema'}</Button>
      </CardContent>
    </Card>
  );
}

/** Errors the server names by code rather than path, placed at the field they concern. */
function issuesOf(err: ApiError): Issue[] {
  const identifier = /^Invalid (namespace|name) /.exec(err.message);
  if (err.code === 'invalid_identifier' && identifier) return [{ path: `/${identifier[1]}`, message: err.message }];
  if (err.code === 'schema_exists') return [{ path: '/name', message: err.message }];
  if (err.code === 'reserved_namespace') return [{ path: '/namespace', message: err.message }];
  return [];
}

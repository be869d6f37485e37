import { useState } from 'react';
import { Title, useNotify, useRedirect } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, FormControlLabel, IconButton, MenuItem, TextField, Typography,
} from '@mui/material';
import { type ApiError, api, isApiError, type Issue } from '../api/client.js';
import { refreshSchemas } from '../api/schemas.js';
import { FIELD_TYPES, FORMATS, emptyRow, parseFieldLists, rowsOf, schemaOf, type FieldRow } from './field-builder.js';

/** Register a schema: a visual field builder and the raw JSON Schema side by side, kept in step. */
export function SchemaCreate() {
  const notify = useNotify();
  const redirect = useRedirect();
  const [namespace, setNamespace] = useState('');
  const [name, setName] = useState('');
  const [title, setTitle] = useState('');
  const [rows, setRows] = useState<FieldRow[]>([{ ...emptyRow(), name: 'title', required: true }]);
  const [json, setJson] = useState(() => JSON.stringify(schemaOf(rows), null, 2));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [indexes, setIndexes] = useState('');
  const [unique, setUnique] = useState('');
  const [issues, setIssues] = useState<Issue[]>([]);
  const [message, setMessage] = useState<string | null>(null);

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

  const submit = async () => {
    setIssues([]);
    setMessage(null);
    let schema: unknown;
    try {
      schema = JSON.parse(json);
    } catch (err) {
      setJsonError(`Not valid JSON: ${(err as Error).message}`);
      return;
    }
    const body: Record<string, unknown> = { namespace: namespace.trim(), name: name.trim(), schema };
    if (title.trim()) body.title = title.trim();
    if (indexes.trim()) body.indexes = parseFieldLists(indexes);
    if (unique.trim()) body.unique = parseFieldLists(unique);
    try {
      await api('/metadata/schemas', { method: 'POST', body });
      await refreshSchemas();
      notify(`Schema ${body.namespace}.${body.name} registered`, { type: 'success' });
      redirect(`/schemas/${body.namespace}.${body.name}/show`);
    } catch (err) {
      if (!isApiError(err)) throw err;
      setMessage(err.message);
      setIssues(err.issues.length ? err.issues : issuesOf(err));
    }
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="New schema" />
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>Register a schema</Typography>
        <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', mb: 2 }}>
          <TextField id="schema-namespace" label="Namespace" value={namespace} onChange={(e) => setNamespace(e.target.value)}
            error={!!issueAt('/namespace')} helperText={issueAt('/namespace') ?? 'e.g. shop (a-z, 0-9, _)'} />
          <TextField id="schema-name" label="Name" value={name} onChange={(e) => setName(e.target.value)}
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
        <Button variant="contained" sx={{ mt: 2 }} onClick={() => void submit()}>Register schema</Button>
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

import { useEffect, useMemo, useState } from 'react';
import { Title, useNotify } from 'react-admin';
import { Link, useNavigate, useParams } from 'react-router-dom';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, FormControlLabel,
  FormGroup, IconButton, MenuItem, Paper, Switch, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography,
} from '@mui/material';
import { api, call, isApiError, type Issue } from '../api/client.js';
import { resourceOf, useSchemas, type SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { formatDateTime } from '../records/cells.js';

type Action = 'read' | 'create' | 'update' | 'delete';
const ACTIONS: Action[] = ['read', 'create', 'update', 'delete'];
const OPERATORS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'like', 'exists'] as const;

/** A policy as the API takes it (CONTRACT 16.1). */
interface Policy {
  resource: string;
  actions: Action[];
  filter?: Record<string, unknown>;
  fields?: { read?: string[]; write?: string[] };
}
interface Role {
  name: string; description: string; builtIn: boolean; policies: Policy[]; createdAt: string | null; updatedAt: string | null; version: number | null;
}

/** One condition of a policy's row filter as the form edits it: `value` as typed (`$user.sub`, text, JSON). */
interface Condition { field: string; op: string; value: string }
/** A policy as the form edits it: the filter as conditions, field lists with "all fields" as null. */
interface PolicyDraft { resource: string; actions: Action[]; conditions: Condition[]; read: string[] | null; write: string[] | null }

const rolesPath = () => `/tenants/${session.tenant}/roles`;

function toDraft(p: Policy): PolicyDraft {
  const conditions: Condition[] = [];
  for (const [field, spec] of Object.entries(p.filter ?? {})) {
    const ops = spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? Object.entries(spec) : [['eq', spec] as const];
    for (const [op, value] of ops) conditions.push({ field, op, value: valueText(value) });
  }
  return { resource: p.resource, actions: [...p.actions], conditions, read: p.fields?.read ?? null, write: p.fields?.write ?? null };
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');
  return JSON.stringify(value);
}

/** A typed value in the field's JSON type: numbers and booleans for such fields, `$user.…` and text as strings. */
function typedValue(text: string, type: string | undefined): unknown {
  const t = text.trim();
  if (t.startsWith('$user.')) return t;
  if (type === 'integer' || type === 'number') return t === '' || Number.isNaN(Number(t)) ? t : Number(t);
  if (type === 'boolean') return t === 'true' ? true : t === 'false' ? false : t;
  if (t === 'null') return null;
  return text;
}

function fieldType(schema: SchemaItem | undefined, field: string): string | undefined {
  const type = schema?.schema.properties?.[field]?.type;
  return Array.isArray(type) ? type.find((x) => x !== 'null') : type;
}

function toPolicy(d: PolicyDraft, schema: SchemaItem | undefined): Policy {
  const policy: Policy = { resource: d.resource, actions: d.actions };
  const filter: Record<string, Record<string, unknown>> = {};
  for (const c of d.conditions.filter((x) => x.field)) {
    const type = fieldType(schema, c.field);
    const value = c.op === 'in' || c.op === 'nin' ? c.value.split(',').map((v) => typedValue(v.trim(), type)).filter((v) => v !== '')
      : c.op === 'exists' ? c.value.trim() !== 'false' : typedValue(c.value, type);
    (filter[c.field] ??= {})[c.op] = value;
  }
  const keys = Object.keys(filter);
  if (keys.length) {
    policy.filter = Object.fromEntries(keys.map((k) => {
      const ops = filter[k]!;
      return [k, Object.keys(ops).length === 1 && 'eq' in ops ? ops.eq : ops];
    }));
  }
  if (d.read || d.write) policy.fields = { ...(d.read ? { read: d.read } : {}), ...(d.write ? { write: d.write } : {}) };
  return policy;
}

const single = (resource: string) => resource !== '*' && !resource.endsWith('.*');
const emptyPolicy = (): PolicyDraft => ({ resource: '', actions: ['read'], conditions: [], read: null, write: null });

/** The tenant's roles (admins): the built-in ones, then the custom ones with their policies; delete with a confirmation. */
export function RoleList() {
  const notify = useNotify();
  const { data, error, reload } = useApi<Role[]>(session.tenant ? rolesPath() : null);
  const [deleting, setDeleting] = useState<Role | null>(null);
  const [refusal, setRefusal] = useState<string | null>(null);
  const remove = async (role: Role) => {
    setDeleting(null);
    try {
      await api(`${rolesPath()}/${role.name}`, { method: 'DELETE' });
      setRefusal(null);
      notify(`Role "${role.name}" deleted`, { type: 'success' });
      reload();
    } catch (err) {
      setRefusal(isApiError(err) ? err.message : String(err));
    }
  };
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Roles" />
      <CardContent>
        <Typography component="h1" variant="h5" gutterBottom>Roles</Typography>
        <Typography gutterBottom>
          A custom role says which records and fields its holders (members, invitations, API tokens) may read and change. A holder of
          several roles gets what any of them allows.
        </Typography>
        <Button component={Link} to="/roles/new" variant="contained" sx={{ my: 1 }}>New role</Button>
        {error && <Alert severity="error">{error.message}</Alert>}
        {refusal && <Alert severity="error" role="alert" sx={{ my: 1 }}>{refusal}</Alert>}
        {data && (
          <Table size="small" aria-label="Roles">
            <TableHead>
              <TableRow>
                <TableCell>Name</TableCell><TableCell>Description</TableCell><TableCell>Policies</TableCell><TableCell>Changed</TableCell><TableCell>Actions</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {data.map((r) => (
                <TableRow key={r.name} data-testid="role-row">
                  <TableCell>{r.builtIn ? r.name : <Link to={`/roles/${r.name}/edit`}>{r.name}</Link>}</TableCell>
                  <TableCell>{r.description}</TableCell>
                  <TableCell>{r.builtIn ? 'built in' : r.policies.map((p) => `${p.resource}: ${p.actions.join(', ')}${p.filter ? ' (filtered)' : ''}`).join('; ')}</TableCell>
                  <TableCell>{r.updatedAt ? formatDateTime(r.updatedAt) : ''}</TableCell>
                  <TableCell>
                    {!r.builtIn && <Button size="small" color="error" onClick={() => setDeleting(r)} aria-label={`Delete ${r.name}`}>Delete</Button>}
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
      </CardContent>
      <Dialog open={deleting !== null} onClose={() => setDeleting(null)} aria-labelledby="role-delete-title">
        <DialogTitle id="role-delete-title">Delete the role "{deleting?.name}"?</DialogTitle>
        <DialogContent>
          <DialogContentText>A role still held by a member, a pending invitation or an API token cannot be deleted.</DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setDeleting(null)}>Cancel</Button>
          <Button color="error" onClick={() => deleting && void remove(deleting)}>Delete role</Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}

/** Creates (`/roles/new`) or edits (`/roles/:name/edit`) a custom role: its policies with pickers, or as JSON; saved with If-Match. */
export function RoleEditor() {
  const { name: existing } = useParams();
  const creating = !existing;
  const navigate = useNavigate();
  const notify = useNotify();
  const { schemas } = useSchemas();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [policies, setPolicies] = useState<PolicyDraft[]>([emptyPolicy()]);
  const [version, setVersion] = useState<number | null>(null);
  const [loaded, setLoaded] = useState(creating);
  const [asJson, setAsJson] = useState(false);
  const [json, setJson] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [issues, setIssues] = useState<Issue[]>([]);

  useEffect(() => {
    if (creating || !session.tenant) return;
    void call<Role>(`${rolesPath()}/${existing}`).then(({ data }) => {
      setName(data.name);
      setDescription(data.description);
      setPolicies(data.policies.map(toDraft));
      setVersion(data.version);
      setLoaded(true);
    }, (err) => setProblem(isApiError(err) ? err.message : String(err)));
  }, [creating, existing]);

  const schemaOf = (resource: string) => schemas.find((s) => resourceOf(s) === resource);
  const resources = useMemo(() => {
    const namespaces = [...new Set(schemas.map((s) => s.namespace))].sort();
    return ['*', ...namespaces.flatMap((ns) => [`${ns}.*`, ...schemas.filter((s) => s.namespace === ns).map(resourceOf)])];
  }, [schemas]);
  const body = (): Policy[] => (asJson ? JSON.parse(json) as Policy[] : policies.map((p) => toPolicy(p, schemaOf(p.resource))));
  const toggleJson = (on: boolean) => {
    setProblem(null);
    if (on) {
      setJson(JSON.stringify(body(), null, 2));
      setAsJson(true);
      return;
    }
    try {
      const parsed = JSON.parse(json) as Policy[];
      if (!Array.isArray(parsed)) throw new Error('the policies are a JSON array');
      setPolicies(parsed.map(toDraft));
      setAsJson(false);
    } catch (err) {
      setProblem(`The JSON cannot be read: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const update = (i: number, change: Partial<PolicyDraft>) => setPolicies((all) => all.map((p, j) => (j === i ? { ...p, ...change } : p)));

  const save = async () => {
    setProblem(null);
    setIssues([]);
    let sent: Policy[];
    try {
      sent = body();
    } catch (err) {
      setProblem(`The JSON cannot be read: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    try {
      if (creating) {
        await api(rolesPath(), { method: 'POST', body: { name, description, policies: sent } });
      } else {
        await api(`${rolesPath()}/${existing}`, { method: 'PUT', body: { description, policies: sent }, headers: version !== null ? { 'If-Match': `"${version}"` } : {} });
      }
      notify(`Role "${creating ? name : existing}" saved`, { type: 'success' });
      navigate('/roles');
    } catch (err) {
      if (!isApiError(err)) return setProblem(String(err));
      setIssues(err.issues.map((i) => ({ ...i, path: i.path.replace(/^\/body(?=\/)/, '') })));
      setProblem(err.status === 412 || err.code === 'version_mismatch'
        ? 'Someone else changed this role since you opened it: reload it, then make your change again.'
        : err.message);
    }
  };

  const issueAt = (prefix: string) => issues.filter((i) => i.path === prefix || i.path.startsWith(`${prefix}/`));
  const unplaced = issues.filter((i) => !/^\/(name|description|policies\/\d+)/.test(i.path));
  if (!loaded) return problem ? <Alert severity="error" sx={{ mt: 2 }}>{problem}</Alert> : null;
  return (
    <Card sx={{ mt: 2 }}>
      <Title title={creating ? 'New role' : `Role ${existing}`} />
      <CardContent component="form" aria-label="Role" noValidate onSubmit={(e) => { e.preventDefault(); void save(); }}>
        <Typography component="h1" variant="h5" gutterBottom>{creating ? 'New role' : `Role "${existing}"`}</Typography>
        <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', my: 2 }}>
          <TextField id="role-name" label="Name" value={name} onChange={(e) => setName(e.target.value)} disabled={!creating} required
            error={!!issueAt('/name').length} helperText={issueAt('/name').map((i) => i.message).join('; ') || 'lowercase letters, digits, - and _; not admin, editor or viewer'} />
          <TextField id="role-description" label="Description" value={description} onChange={(e) => setDescription(e.target.value)} sx={{ minWidth: 320 }}
            error={!!issueAt('/description').length} helperText={issueAt('/description').map((i) => i.message).join('; ')} />
        </Box>
        <FormControlLabel control={<Switch checked={asJson} onChange={(e) => toggleJson(e.target.checked)} />} label="Edit the policies as JSON" />
        {asJson ? (
          <TextField id="role-json" label="Policies (JSON)" value={json} onChange={(e) => setJson(e.target.value)} multiline minRows={8} fullWidth sx={{ my: 2, fontFamily: 'monospace' }}
            error={!!issueAt('/policies').length} helperText={issueAt('/policies').map((i) => `${i.path}: ${i.message}`).join('; ')} />
        ) : policies.map((p, i) => (
          <PolicyEditor key={i} index={i} policy={p} resources={resources} schema={schemaOf(p.resource)} issues={issueAt(`/policies/${i}`)}
            onChange={(change) => update(i, change)} onRemove={() => setPolicies((all) => all.filter((_, j) => j !== i))} />
        ))}
        {!asJson && <Button onClick={() => setPolicies((all) => [...all, emptyPolicy()])} sx={{ my: 1 }}>Add a policy</Button>}
        {problem && (
          <Alert severity="error" role="alert" sx={{ my: 2 }}>
            {problem}
            {unplaced.map((i) => <div key={i.path}>{i.path}: {i.message}</div>)}
          </Alert>
        )}
        <Box sx={{ display: 'flex', gap: 1, mt: 2 }}>
          <Button type="submit" variant="contained" disabled={!name.trim()}>Save role</Button>
          <Button component={Link} to="/roles">Cancel</Button>
        </Box>
      </CardContent>
    </Card>
  );
}

interface PolicyEditorProps {
  index: number; policy: PolicyDraft; resources: string[]; schema: SchemaItem | undefined; issues: Issue[];
  onChange: (change: Partial<PolicyDraft>) => void; onRemove: () => void;
}

/** One policy: its resource, actions, and for a single schema its row filter and readable and writable fields. */
function PolicyEditor({ index, policy, resources, schema, issues, onChange, onRemove }: PolicyEditorProps) {
  const id = `policy-${index}`;
  const fields = Object.keys(schema?.schema.properties ?? {});
  const options = resources.includes(policy.resource) || !policy.resource ? resources : [policy.resource, ...resources];
  const at = (sub: string) => issues.filter((i) => i.path.startsWith(`/policies/${index}/${sub}`)).map((i) => i.message).join('; ');
  const setCondition = (j: number, change: Partial<Condition>) => onChange({ conditions: policy.conditions.map((c, k) => (k === j ? { ...c, ...change } : c)) });
  return (
    <Paper variant="outlined" component="fieldset" aria-label={`Policy ${index + 1}`} data-testid="policy" sx={{ p: 2, my: 2 }}>
      <Typography component="legend" variant="subtitle1">Policy {index + 1}</Typography>
      <Box sx={{ display: 'flex', gap: 2, alignItems: 'center', flexWrap: 'wrap' }}>
        <TextField id={`${id}-resource`} select label="Records of" value={policy.resource} sx={{ minWidth: 220 }}
          onChange={(e) => onChange({ resource: e.target.value, ...(single(e.target.value) ? {} : { conditions: [], read: null, write: null }) })}
          error={!!at('resource')} helperText={at('resource') || '* is every schema, ns.* every schema of a namespace'}>
          {options.map((r) => <MenuItem key={r} value={r}>{r}</MenuItem>)}
        </TextField>
        <FormGroup row role="group" aria-label={`Policy ${index + 1} actions`}>
          {ACTIONS.map((a) => (
            <FormControlLabel key={a} label={a} control={(
              <Checkbox checked={policy.actions.includes(a)}
                onChange={(e) => onChange({ actions: e.target.checked ? ACTIONS.filter((x) => x === a || policy.actions.includes(x)) : policy.actions.filter((x) => x !== a) })} />
            )} />
          ))}
        </FormGroup>
        <Button color="error" onClick={onRemove}>Remove policy</Button>
      </Box>
      {at('actions') && <Alert severity="error">{at('actions')}</Alert>}
      {single(policy.resource) && (
        <>
          <Typography variant="subtitle2" sx={{ mt: 2 }}>Only the records where</Typography>
          {!policy.conditions.length && <Typography variant="body2" color="text.secondary">every record (no row filter)</Typography>}
          {policy.conditions.map((c, j) => (
            <Box key={j} sx={{ display: 'flex', gap: 1, my: 1, alignItems: 'flex-start' }} data-testid="condition">
              <TextField id={`${id}-cond-${j}-field`} select label="Field" value={c.field} onChange={(e) => setCondition(j, { field: e.target.value })} sx={{ minWidth: 160 }}
                error={!!at(`filter/${c.field}`)} helperText={at(`filter/${c.field}`)}>
                {(fields.includes(c.field) || !c.field ? fields : [c.field, ...fields]).map((f) => <MenuItem key={f} value={f}>{f}</MenuItem>)}
              </TextField>
              <TextField id={`${id}-cond-${j}-op`} select label="Operator" value={c.op} onChange={(e) => setCondition(j, { op: e.target.value })} sx={{ minWidth: 100 }}>
                {OPERATORS.map((op) => <MenuItem key={op} value={op}>{op}</MenuItem>)}
              </TextField>
              <TextField id={`${id}-cond-${j}-value`} label="Value" value={c.value} onChange={(e) => setCondition(j, { value: e.target.value })}
                helperText="$user.sub or $user.email for the caller's; in and nin: a comma-separated list" />
              <IconButton aria-label={`Remove condition ${j + 1}`} onClick={() => onChange({ conditions: policy.conditions.filter((_, k) => k !== j) })}>×</IconButton>
            </Box>
          ))}
          <Button size="small" onClick={() => onChange({ conditions: [...policy.conditions, { field: fields[0] ?? '', op: 'eq', value: '' }] })}>Add a condition</Button>
          {at('filter') && <Alert severity="error">{at('filter')}</Alert>}
          <FieldPicker label="Readable fields" id={`${id}-read`} fields={fields} chosen={policy.read} error={at('fields/read')} onChange={(read) => onChange({ read })} />
          <FieldPicker label="Writable fields" id={`${id}-write`} fields={fields} chosen={policy.write} error={at('fields/write')} onChange={(write) => onChange({ write })} />
        </>
      )}
    </Paper>
  );
}

/** A field list: "all fields" (null: the policy names none), or the chosen ones of the schema's properties. */
function FieldPicker({ label, id, fields, chosen, error, onChange }: { label: string; id: string; fields: string[]; chosen: string[] | null; error: string; onChange: (c: string[] | null) => void }) {
  return (
    <Box component="fieldset" aria-label={label} sx={{ border: 0, p: 0, mt: 2 }}>
      <Typography component="legend" variant="subtitle2">{label}</Typography>
      <FormGroup row>
        <FormControlLabel label="All fields" control={<Checkbox id={`${id}-all`} checked={chosen === null} onChange={(e) => onChange(e.target.checked ? null : [])} />} />
        {chosen !== null && fields.map((f) => (
          <FormControlLabel key={f} label={f} control={(
            <Checkbox checked={chosen.includes(f)} onChange={(e) => onChange(e.target.checked ? fields.filter((x) => x === f || chosen.includes(x)) : chosen.filter((x) => x !== f))} />
          )} />
        ))}
      </FormGroup>
      {error && <Alert severity="error">{error}</Alert>}
    </Box>
  );
}

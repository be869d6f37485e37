import { useState } from 'react';
import { Title, useNotify } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, Chip, Dialog, DialogActions, DialogContent, DialogContentText, DialogTitle, Link as MuiLink,
  Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography,
} from '@mui/material';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { api, isApiError, type Issue } from '../api/client.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { formatDateTime } from '../records/cells.js';

/** A release as the API answers it (docs/content-workflow.md). */
interface Release {
  id: string; name: string; description: string; status: 'open' | 'scheduled' | 'published' | 'failed' | 'rolled_back';
  items: Array<{ id: string; namespace: string; schema: string; version: number | null }>;
  scheduledAt: string | null; publishedAt: string | null; errors: ItemIssue[]; createdAt: string;
}
/** An item that cannot be published or rolled back, as a 409's details name it. */
type ItemIssue = Issue & { namespace?: string; schema?: string; id?: string; code?: string };

const STATUS_COLOR = { open: 'default', scheduled: 'primary', published: 'success', failed: 'error', rolled_back: 'default' } as const;
const StatusChip = ({ status }: { status: Release['status'] }) => (
  <Chip size="small" data-testid="release-status" label={status.replace('_', ' ')} color={STATUS_COLOR[status]} />
);

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The releases of the tenant, newest first, and a form that opens a new one. */
export function ReleaseList() {
  const { data, error } = useApi<{ items: Release[] }>('/releases?limit=100');
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [failure, setFailure] = useState<string | null>(null);
  const create = async () => {
    setFailure(null);
    try {
      const release = await api<Release>('/releases', { method: 'POST', body: { name } });
      navigate(`/releases/${release.id}`);
    } catch (err) {
      setFailure(messageOf(err));
    }
  };
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Releases" />
      <CardContent>
        <Typography component="h2" variant="h6">Releases</Typography>
        <Typography variant="body2" sx={{ mb: 1 }}>Drafts of several records published together, now or at a set time, and rolled back together.</Typography>
        {session.can('editor') && (
          <Box component="form" aria-label="New release" sx={{ display: 'flex', gap: 1, alignItems: 'center', mb: 2 }}
            onSubmit={(e) => { e.preventDefault(); void create(); }}>
            <TextField id="release-name" label="Name" value={name} onChange={(e) => setName(e.target.value)} required />
            <Button type="submit" variant="contained" disabled={!name.trim()}>Create release</Button>
          </Box>
        )}
        {failure && <Alert severity="error" role="alert">{failure}</Alert>}
        {error && <Alert severity="error" role="alert">{error.message}</Alert>}
        <Table size="small" aria-label="Releases">
          <TableHead>
            <TableRow><TableCell>Name</TableCell><TableCell>Status</TableCell><TableCell>Items</TableCell><TableCell>Scheduled</TableCell><TableCell>Published</TableCell></TableRow>
          </TableHead>
          <TableBody>
            {(data?.items ?? []).map((r) => (
              <TableRow key={r.id} data-testid="release-row">
                <TableCell><MuiLink component={Link} to={`/releases/${r.id}`}>{r.name}</MuiLink></TableCell>
                <TableCell><StatusChip status={r.status} /></TableCell>
                <TableCell>{r.items.length}</TableCell>
                <TableCell>{formatDateTime(r.scheduledAt)}</TableCell>
                <TableCell>{formatDateTime(r.publishedAt)}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </CardContent>
    </Card>
  );
}

/** The items a 409 or a failed release names. */
function IssueList({ issues }: { issues: ItemIssue[] }) {
  return (
    <Box component="ul" sx={{ m: 0, pl: 3 }}>
      {issues.map((i, n) => <li key={n}>{i.namespace && i.schema ? `${i.namespace}.${i.schema} ${i.id}: ` : `${i.path}: `}{i.message}</li>)}
    </Box>
  );
}

/** Binds a record's draft to the release by namespace, schema and id. */
function AddItem({ release, onChange }: { release: Release; onChange: (r: Release) => void }) {
  const [item, setItem] = useState({ namespace: '', schema: '', id: '' });
  const [failure, setFailure] = useState<string | null>(null);
  const add = async () => {
    setFailure(null);
    try {
      onChange(await api<Release>(`/releases/${release.id}/items`, { method: 'POST', body: item }));
      setItem({ namespace: '', schema: '', id: '' });
    } catch (err) {
      setFailure(messageOf(err));
    }
  };
  const input = (key: keyof typeof item, label: string) => (
    <TextField id={`item-${key}`} label={label} value={item[key]} onChange={(e) => setItem({ ...item, [key]: e.target.value.trim() })} required />
  );
  return (
    <Box component="form" aria-label="Add an item" sx={{ mt: 2 }} onSubmit={(e) => { e.preventDefault(); void add(); }}>
      <Typography component="h3" variant="subtitle1">Add a record&apos;s draft</Typography>
      <Box sx={{ display: 'flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
        {input('namespace', 'Namespace')}{input('schema', 'Schema')}{input('id', 'Record ID')}
        <Button type="submit" variant="outlined" disabled={!item.namespace || !item.schema || !item.id}>Add item</Button>
      </Box>
      {failure && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{failure}</Alert>}
    </Box>
  );
}

/** Creates a preview token of the release and shows it with a link to the public runtime. */
function PreviewLink({ release }: { release: Release }) {
  const [preview, setPreview] = useState<{ token: string; expiresAt: string } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const create = async () => {
    setFailure(null);
    try {
      setPreview(await api('/previews', { method: 'POST', body: { releaseId: release.id } }));
    } catch (err) {
      setFailure(messageOf(err));
    }
  };
  // The public page to open is the editor's to say (the console names no pack's route): the site's root by default.
  const [base, setBase] = useState(`${window.location.origin}/`);
  const href = preview && `${base}${base.includes('?') ? '&' : '?'}preview=${encodeURIComponent(preview.token)}`;
  return (
    <Box component="section" aria-label="Preview" sx={{ mt: 2 }}>
      <Button variant="outlined" onClick={() => void create()}>Preview link</Button>
      {failure && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{failure}</Alert>}
      {preview && (
        <TextField id="preview-base" label="Public URL to preview" value={base} onChange={(e) => setBase(e.target.value.trim())} fullWidth sx={{ mt: 1 }} />
      )}
      {preview && href && (
        <Alert severity="info" sx={{ mt: 1 }}>
          Token (shown once, valid until {formatDateTime(preview.expiresAt)}): <code data-testid="preview-token">{preview.token}</code>
          <br />Any public GET of the tenant takes <code>?preview=</code>, e.g.{' '}
          <MuiLink href={href} target="_blank" rel="noreferrer" data-testid="preview-link">{href}</MuiLink>
        </Alert>
      )}
    </Box>
  );
}

/** A release's page: its items, publish now or at a time, unschedule, roll back (force after a 409), preview. */
export function ReleasePage() {
  const { id } = useParams();
  const notify = useNotify();
  const { data: release, error, setData } = useApi<Release>(`/releases/${id}`);
  const [at, setAt] = useState('');
  const [failure, setFailure] = useState<{ message: string; issues: ItemIssue[] } | null>(null);
  const [forceable, setForceable] = useState<ItemIssue[] | null>(null);
  if (error) return <Alert severity="error" role="alert" sx={{ mt: 2 }}>{error.message}</Alert>;
  if (!release) return null;
  const pending = ['open', 'scheduled', 'failed'].includes(release.status);
  const admin = session.can('admin');
  const act = async (label: string, path: string, method: string, body?: unknown): Promise<boolean> => {
    setFailure(null);
    try {
      setData(await api<Release>(`/releases/${release.id}${path}`, { method, body }));
      notify(label, { type: 'success' });
      return true;
    } catch (err) {
      if (isApiError(err) && err.status === 409 && path === '/rollback' && !(body as { force?: boolean })?.force) setForceable(err.issues);
      else setFailure({ message: messageOf(err), issues: isApiError(err) ? err.issues : [] });
      return false;
    }
  };
  return (
    <Card sx={{ mt: 2 }}>
      <Title title={`Release: ${release.name}`} />
      <CardContent>
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
          <Typography component="h2" variant="h6">{release.name}</Typography>
          <StatusChip status={release.status} />
        </Box>
        <Typography variant="body2">
          {release.scheduledAt && `Publishes at ${formatDateTime(release.scheduledAt)}. `}
          {release.publishedAt && `Published ${formatDateTime(release.publishedAt)}.`}
        </Typography>
        {release.errors.length > 0 && <Alert severity="error" sx={{ mt: 1 }}>The scheduled publish failed:<IssueList issues={release.errors} /></Alert>}
        {failure && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{failure.message}<IssueList issues={failure.issues} /></Alert>}
        <Table size="small" aria-label="Items" sx={{ mt: 1 }}>
          <TableHead><TableRow><TableCell>Record</TableCell><TableCell>ID</TableCell><TableCell>Version</TableCell><TableCell>Action</TableCell></TableRow></TableHead>
          <TableBody>
            {release.items.map((item) => (
              <TableRow key={item.id} data-testid="release-item">
                <TableCell><MuiLink component={Link} to={`/${item.namespace}.${item.schema}/${item.id}`}>{item.namespace}.{item.schema}</MuiLink></TableCell>
                <TableCell>{item.id}</TableCell>
                <TableCell>{item.version ?? ''}</TableCell>
                <TableCell>
                  {pending && <Button size="small" onClick={() => void act('Item removed', `/items/${item.id}`, 'DELETE')}>Remove</Button>}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        {pending && <AddItem release={release} onChange={setData} />}
        {admin && (
          <Box sx={{ display: 'flex', gap: 1, alignItems: 'center', mt: 2, flexWrap: 'wrap' }}>
            {pending && <Button variant="contained" onClick={() => void act('Release published', '/publish', 'POST')}>Publish now</Button>}
            {pending && release.status !== 'scheduled' && (
              <>
                <TextField id="release-at" label="Publish at" type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
                <Button disabled={!at} onClick={() => void act('Release scheduled', '/publish', 'POST', { at: new Date(at).toISOString() })}>Schedule</Button>
              </>
            )}
            {release.status === 'scheduled' && <Button onClick={() => void act('Release unscheduled', '/schedule', 'DELETE')}>Unschedule</Button>}
            {release.status === 'published' && <Button color="warning" onClick={() => void act('Release rolled back', '/rollback', 'POST', {})}>Roll back</Button>}
          </Box>
        )}
        {session.can('editor') && <PreviewLink release={release} />}
      </CardContent>
      <Dialog open={!!forceable} aria-labelledby="force-title">
        <DialogTitle id="force-title">Roll back anyway?</DialogTitle>
        <DialogContent>
          <DialogContentText component="div">
            These records changed since the release was published; rolling back puts them back as they were before it:
            <IssueList issues={forceable ?? []} />
          </DialogContentText>
        </DialogContent>
        <DialogActions>
          <Button onClick={() => setForceable(null)}>Cancel</Button>
          <Button color="warning" onClick={async () => { setForceable(null); await act('Release rolled back', '/rollback', 'POST', { force: true }); }}>Roll back anyway</Button>
        </DialogActions>
      </Dialog>
    </Card>
  );
}

import { Fragment, useState } from 'react';
import {
  BooleanField, BooleanInput, Create, CreateButton, Datagrid, DeleteWithConfirmButton, List, Show, SimpleForm, TextField, TextInput,
  TopToolbar, required, useNotify, useRecordContext,
} from 'react-admin';
import {
  Alert, Box, Button, Chip, Dialog, DialogActions, DialogContent, DialogTitle, MenuItem, Table, TableBody, TableCell, TableHead, TableRow,
  TextField as MuiTextField, Typography,
} from '@mui/material';
import { useNavigate } from 'react-router-dom';
import { api, query } from '../api/client.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';

/** Connectors (webhook subscriptions): list, create with a secret shown once, delivery log with retry. */
export default function Connectors() {
  return (
    <List title="Connectors" actions={<TopToolbar>{session.can('admin') && <CreateButton />}</TopToolbar>} sort={{ field: 'createdAt', order: 'DESC' }}>
      <Datagrid rowClick="show" bulkActionButtons={false}>
        <TextField source="url" sortable={false} />
        <TextField source="events" sortable={false} />
        <TextField source="description" sortable={false} />
        <BooleanField source="active" sortable={false} />
        {session.can('admin') && <DeleteWithConfirmButton />}
      </Datagrid>
    </List>
  );
}

/** A random signing secret made in the browser; the API keeps it sealed and never shows it again. */
function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const base64 = (text: string) => btoa(text);

export function ConnectorCreate() {
  const navigate = useNavigate();
  const [shown, setShown] = useState<{ id: string; secret: string } | null>(null);
  const [secret] = useState(newSecret);
  return (
    <>
      <Create
        title="New connector" mutationMode="pessimistic"
        transform={(data: Record<string, any>) => ({
          url: data.url, description: data.description || undefined, active: data.active ?? true, secret,
          events: String(data.events ?? '').split(',').map((e: string) => e.trim()).filter(Boolean),
        })}
        mutationOptions={{ onSuccess: (created: { id: string }) => setShown({ id: created.id, secret }) }}
      >
        <SimpleForm>
          <TextInput id="url" source="url" label="Endpoint URL" validate={required()} fullWidth />
          <TextInput id="events" source="events" label="Events" helperText="Comma-separated: shop.*, shop.product.updated or * for all" validate={required()} fullWidth />
          <TextInput id="description" source="description" label="Description" fullWidth />
          <BooleanInput source="active" label="Active" defaultValue />
        </SimpleForm>
      </Create>
      <Dialog open={!!shown} aria-labelledby="secret-title">
        <DialogTitle id="secret-title">Signing secret</DialogTitle>
        <DialogContent>
          <Alert severity="warning" sx={{ mb: 2 }}>Copy it now: it is shown only once and cannot be read back.</Alert>
          <Typography>Secret (HMAC key of X-Platform-Signature):</Typography>
          <Box component="pre" data-testid="connector-secret" sx={{ bgcolor: 'grey.100', p: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>{shown?.secret}</Box>
          <Typography>Standard Webhooks secret:</Typography>
          <Box component="pre" sx={{ bgcolor: 'grey.100', p: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>{shown && `whsec_${base64(shown.secret)}`}</Box>
        </DialogContent>
        <DialogActions><Button onClick={() => navigate(`/connectors/${shown?.id}/show`)}>I have copied it</Button></DialogActions>
      </Dialog>
    </>
  );
}

interface Attempt {
  attempt: number; statusCode: number | null; durationMs: number; error: string | null; at: string;
  responseHeaders: Record<string, string> | null; responseBody: string | null;
}
interface Delivery {
  id: string; event: string; status: string; attemptCount: number; lastStatusCode: number | null; lastError: string | null;
  nextAttemptAt: string; deliveredAt: string | null; createdAt: string; attempts: Attempt[];
}
interface DeliveryDetail extends Delivery {
  request: { method: string; url: string; headers: Record<string, string>; signatureHeaders: string[]; body: string | null };
}

const STATUSES = ['pending', 'delivered', 'failed', 'cancelled'];

/** What each signature header says, for whoever writes the receiving end. */
const SIGNATURES: Record<string, string> = {
  'X-Platform-Signature': 't=<unix time>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>: recompute it and compare; refuse a t older than 5 minutes.',
  'webhook-id': 'The delivery\'s id (Standard Webhooks): the same on every attempt, so a receiver can drop repeats.',
  'webhook-timestamp': 'The attempt\'s Unix time (Standard Webhooks).',
  'webhook-signature': 'v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">: verify with any Standard Webhooks library and the secret whsec_<base64 of the secret>.',
};

const when = (iso: string | null) => (iso ? new Date(iso).toLocaleString() : '');

/** The body as sent, indented when it is JSON. */
function pretty(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** The receiver's answer to one attempt: its status, headers and the first KiB of its body. */
function AttemptAnswer({ attempt: a }: { attempt: Attempt }) {
  const name = `Answer to attempt ${a.attempt}`;
  return (
    <Box component="details" sx={{ mt: 1 }} data-testid="attempt-answer">
      <Box component="summary" sx={{ cursor: 'pointer' }}>{name}: HTTP {a.statusCode} at {when(a.at)}, in {a.durationMs} ms</Box>
      <Box component="section" aria-label={name} sx={{ pl: 2 }}>
        <Table size="small" aria-label={`Headers of the answer to attempt ${a.attempt}`}>
          <TableHead><TableRow><TableCell>Header</TableCell><TableCell>Value</TableCell></TableRow></TableHead>
          <TableBody>
            {Object.entries(a.responseHeaders ?? {}).map(([header, value]) => (
              <TableRow key={header}><TableCell sx={{ fontFamily: 'monospace' }}>{header}</TableCell><TableCell sx={{ fontFamily: 'monospace', wordBreak: 'break-all' }}>{value}</TableCell></TableRow>
            ))}
          </TableBody>
        </Table>
        <Typography variant="body2" sx={{ mt: 1 }}>Body (the first KiB is kept):</Typography>
        {a.responseBody
          ? <Box component="pre" tabIndex={0} aria-label={`Body of the answer to attempt ${a.attempt}`} sx={{ bgcolor: 'grey.100', p: 1, overflow: 'auto', maxHeight: 240, fontSize: 13, whiteSpace: 'pre-wrap', wordBreak: 'break-all' }}>{a.responseBody}</Box>
          : <Typography variant="body2">(empty)</Typography>}
      </Box>
    </Box>
  );
}

/** One delivery opened: every attempt, then the request those attempts send (the same body, signed anew each time). */
function DeliveryDetails({ connectorId, deliveryId }: { connectorId: string; deliveryId: string }) {
  const { data } = useApi<DeliveryDetail>(`/connectors/${connectorId}/deliveries/${deliveryId}`);
  if (!data) return <Typography>Loading…</Typography>;
  return (
    <Box component="section" aria-label="Delivery details" data-testid="delivery-details" sx={{ p: 1 }}>
      <Typography component="h3" variant="subtitle1">Attempts</Typography>
      {!data.attempts.length && <Typography>Not attempted yet; the first attempt is due {when(data.nextAttemptAt)}.</Typography>}
      {!!data.attempts.length && (
        <Table size="small" aria-label="Attempts">
          <TableHead>
            <TableRow>
              <TableCell>#</TableCell><TableCell>Time</TableCell><TableCell>Answer</TableCell><TableCell>Took</TableCell><TableCell>Error and start of the answer</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {data.attempts.map((a) => (
              <TableRow key={a.attempt} data-testid="attempt-row">
                <TableCell>{a.attempt}</TableCell><TableCell>{when(a.at)}</TableCell>
                <TableCell>{a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`}</TableCell>
                <TableCell>{a.durationMs} ms</TableCell><TableCell>{a.error ?? ''}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      )}
      {data.status === 'pending' && !!data.attempts.length && <Typography sx={{ mt: 1 }}>Next attempt: {when(data.nextAttemptAt)}.</Typography>}
      {data.attempts.filter((a) => a.responseHeaders !== null).map((a) => <AttemptAnswer key={a.attempt} attempt={a} />)}
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>Request</Typography>
      <Typography sx={{ fontFamily: 'monospace', wordBreak: 'break-all' }}>{data.request.method} {data.request.url}</Typography>
      <Table size="small" aria-label="Headers">
        <TableHead><TableRow><TableCell>Header</TableCell><TableCell>Value or meaning</TableCell></TableRow></TableHead>
        <TableBody>
          {Object.entries(data.request.headers).map(([name, value]) => (
            <TableRow key={name}><TableCell sx={{ fontFamily: 'monospace' }}>{name}</TableCell><TableCell sx={{ fontFamily: 'monospace' }}>{value}</TableCell></TableRow>
          ))}
          {data.request.signatureHeaders.map((name) => (
            <TableRow key={name} data-testid="signature-header">
              <TableCell sx={{ fontFamily: 'monospace' }}>{name}</TableCell><TableCell>{SIGNATURES[name] ?? 'A signature, made anew at each attempt.'}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      <Typography variant="body2" sx={{ mt: 1 }}>
        The signatures are made at each attempt with the connector&apos;s secret and the attempt&apos;s time, so they are not kept; they sign the body below byte for byte.
      </Typography>
      <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>Body</Typography>
      {data.request.body === null
        ? <Typography>The event is no longer kept (older than the outbox retention), so its body cannot be shown.</Typography>
        : <Box component="pre" data-testid="delivery-body" tabIndex={0} sx={{ bgcolor: 'grey.100', p: 1, overflow: 'auto', maxHeight: 320, fontSize: 13 }}>{pretty(data.request.body)}</Box>}
    </Box>
  );
}

function Deliveries() {
  const connector = useRecordContext<{ id: string }>();
  const notify = useNotify();
  const [status, setStatus] = useState('');
  const [event, setEvent] = useState('');
  const [open, setOpen] = useState<string | null>(null);
  const filter = query({ limit: 50, status, event: event.trim() });
  const { data, reload } = useApi<{ items: Delivery[] }>(connector ? `/connectors/${connector.id}/deliveries${filter}` : null);
  if (!connector) return null;
  const retry = async (d: Delivery) => {
    await api(`/connectors/${connector.id}/deliveries/${d.id}/retry`, { method: 'POST' });
    notify('Delivery queued again', { type: 'success' });
    setTimeout(reload, 500);
  };
  return (
    <Box component="section" aria-label="Deliveries" sx={{ p: 2 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 2, flexWrap: 'wrap' }}>
        <Typography component="h2" variant="h6">Delivery log</Typography>
        <MuiTextField select id="delivery-status" label="Status" value={status} onChange={(e) => setStatus(e.target.value)} sx={{ minWidth: 140 }}>
          <MenuItem value="">Any</MenuItem>
          {STATUSES.map((s) => <MenuItem key={s} value={s}>{s}</MenuItem>)}
        </MuiTextField>
        <MuiTextField id="delivery-event" label="Event" placeholder="shop.order.created" value={event} onChange={(e) => setEvent(e.target.value)} />
        <Button onClick={reload}>Refresh</Button>
      </Box>
      {data && !data.items.length && <Typography sx={{ mt: 1 }}>{status || event ? 'No delivery matches these filters.' : 'No deliveries yet: events this connector subscribes to are listed here as they are sent.'}</Typography>}
      <Table size="small" aria-label="Delivery log">
        <TableHead>
          <TableRow>
            <TableCell>Created</TableCell><TableCell>Event</TableCell><TableCell>Status</TableCell><TableCell>Attempts</TableCell>
            <TableCell>Last answer</TableCell><TableCell>Next attempt</TableCell><TableCell>Action</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {(data?.items ?? []).map((d) => (
            <Fragment key={d.id}>
              <TableRow data-testid="delivery-row">
                <TableCell>{when(d.createdAt)}</TableCell>
                <TableCell>{d.event}</TableCell>
                <TableCell><Chip size="small" label={d.status} color={d.status === 'delivered' ? 'success' : d.status === 'failed' ? 'error' : 'default'} /></TableCell>
                <TableCell>{d.attemptCount}</TableCell>
                <TableCell>{d.lastError ?? (d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : '')}</TableCell>
                <TableCell>{d.status === 'pending' ? when(d.nextAttemptAt) : ''}</TableCell>
                <TableCell>
                  <Button size="small" aria-expanded={open === d.id} onClick={() => setOpen(open === d.id ? null : d.id)}>{open === d.id ? 'Hide' : 'Details'}</Button>
                  {session.can('admin') && d.status !== 'delivered' && <Button size="small" onClick={() => void retry(d)}>Retry</Button>}
                </TableCell>
              </TableRow>
              {open === d.id && <TableRow><TableCell colSpan={7}><DeliveryDetails connectorId={connector.id} deliveryId={d.id} /></TableCell></TableRow>}
            </Fragment>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

export function ConnectorShow() {
  return (
    <Show title="Connector">
      <Box sx={{ p: 2 }}>
        <TextField source="url" />
        <Typography component="div">Events: <TextField source="events" /></Typography>
        <Typography component="div">Active: <BooleanField source="active" /></Typography>
      </Box>
      <Deliveries />
    </Show>
  );
}

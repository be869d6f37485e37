import { useState } from 'react';
import {
  BooleanField, BooleanInput, Create, CreateButton, Datagrid, DeleteWithConfirmButton, List, Show, SimpleForm, TextField, TextInput,
  TopToolbar, required, useNotify, useRecordContext,
} from 'react-admin';
import {
  Alert, Box, Button, Chip, Dialog, DialogActions, DialogContent, DialogTitle, Table, TableBody, TableCell, TableHead, TableRow, Typography,
} from '@mui/material';
import { useNavigate } from 'react-router-dom';
import { api } from '../api/client.js';
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

interface Delivery {
  id: string; event: string; status: string; attemptCount: number; lastStatusCode: number | null; lastError: string | null;
  nextAttemptAt: string; deliveredAt: string | null; createdAt: string;
}

function Deliveries() {
  const connector = useRecordContext<{ id: string }>();
  const notify = useNotify();
  const { data, reload } = useApi<{ items: Delivery[] }>(connector ? `/connectors/${connector.id}/deliveries?limit=50` : null);
  if (!connector) return null;
  const retry = async (d: Delivery) => {
    await api(`/connectors/${connector.id}/deliveries/${d.id}/retry`, { method: 'POST' });
    notify('Delivery queued again', { type: 'success' });
    setTimeout(reload, 500);
  };
  return (
    <Box component="section" aria-label="Deliveries" sx={{ p: 2 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 2 }}>
        <Typography component="h2" variant="h6">Delivery log</Typography>
        <Button onClick={reload}>Refresh</Button>
      </Box>
      <Table size="small" aria-label="Delivery log">
        <TableHead>
          <TableRow>
            <TableCell>Event</TableCell><TableCell>Status</TableCell><TableCell>Attempts</TableCell>
            <TableCell>Last answer</TableCell><TableCell>Next attempt</TableCell><TableCell>Action</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {(data?.items ?? []).map((d) => (
            <TableRow key={d.id} data-testid="delivery-row">
              <TableCell>{d.event}</TableCell>
              <TableCell><Chip size="small" label={d.status} color={d.status === 'delivered' ? 'success' : d.status === 'failed' ? 'error' : 'default'} /></TableCell>
              <TableCell>{d.attemptCount}</TableCell>
              <TableCell>{d.lastError ?? (d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : '')}</TableCell>
              <TableCell>{d.status === 'pending' ? new Date(d.nextAttemptAt).toLocaleString() : ''}</TableCell>
              <TableCell>{session.can('admin') && d.status !== 'delivered' && <Button size="small" onClick={() => void retry(d)}>Retry</Button>}</TableCell>
            </TableRow>
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

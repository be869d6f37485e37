import { useState } from 'react';
import { Title, useNotify } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, Dialog, DialogActions, DialogContent, DialogTitle, MenuItem, Table, TableBody, TableCell, TableHead,
  TableRow, TextField, Typography,
} from '@mui/material';
import { api, isApiError } from '../api/client.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { formatDateTime } from '../records/cells.js';

interface Token {
  id: string; name: string; role: string; prefix: string; createdAt: string; expiresAt: string | null; lastUsedAt: string | null; revokedAt: string | null;
}

/**
 * The tenant's API tokens (admins): listed without their secrets, created with the secret shown once, revoked.
 * An integration sends `Authorization: Bearer pat_…` and acts with the token's role on this tenant.
 */
export default function ApiTokens() {
  const notify = useNotify();
  const base = `/tenants/${session.tenant}/api-tokens`;
  const { data, reload } = useApi<{ items: Token[] }>(session.tenant ? `${base}?limit=100` : null);
  const roles = useApi<{ name: string }[]>(session.tenant ? `/tenants/${session.tenant}/roles` : null).data;
  const [name, setName] = useState('');
  const [role, setRole] = useState('viewer');
  const [expires, setExpires] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const create = async () => {
    try {
      const created = await api<Token & { token: string }>(base, {
        method: 'POST', body: { name, role, ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}) },
      });
      setSecret(created.token);
      setName('');
      setError(null);
      reload();
    } catch (err) {
      setError(isApiError(err) ? `${err.message}${err.issues.length ? `: ${err.issues.map((i) => `${i.path} ${i.message}`).join('; ')}` : ''}` : String(err));
    }
  };
  const revoke = async (token: Token) => {
    if (!window.confirm(`Revoke "${token.name}"? Integrations using it stop working within a second.`)) return;
    await api(`${base}/${token.id}`, { method: 'DELETE' });
    notify(`Token "${token.name}" revoked`, { type: 'success' });
    reload();
  };
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="API tokens" />
      <CardContent>
        <Typography component="h1" variant="h5" gutterBottom>API tokens</Typography>
        <Typography gutterBottom>
          For integrations: a token acts on this tenant with its role (<code>Authorization: Bearer pat_…</code>) until it expires or is revoked.
        </Typography>
        <Box component="form" aria-label="New API token" sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center', my: 2 }}
          onSubmit={(e) => { e.preventDefault(); void create(); }}>
          <TextField id="token-name" label="Name" value={name} onChange={(e) => setName(e.target.value)} required />
          <TextField id="token-role" select label="Role" value={role} onChange={(e) => setRole(e.target.value)} sx={{ minWidth: 120 }}>
            {(roles?.map((r) => r.name) ?? ['admin', 'editor', 'viewer']).map((r) => <MenuItem key={r} value={r}>{r}</MenuItem>)}
          </TextField>
          <TextField id="token-expires" label="Expires (optional)" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
          <Button type="submit" variant="contained" disabled={!name.trim()}>Create token</Button>
        </Box>
        {error && <Alert severity="error" sx={{ mb: 2 }}>{error}</Alert>}
        {data && !data.items.length && <Typography>No tokens yet. Create one for each integration, with the least role it needs.</Typography>}
        {!!data?.items.length && (
          <Table size="small" aria-label="API tokens">
            <TableHead>
              <TableRow>
                <TableCell>Name</TableCell><TableCell>Role</TableCell><TableCell>Starts with</TableCell><TableCell>Created</TableCell>
                <TableCell>Expires</TableCell><TableCell>Last used</TableCell><TableCell>Status</TableCell><TableCell>Action</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {data.items.map((t) => (
                <TableRow key={t.id} data-testid="token-row">
                  <TableCell>{t.name}</TableCell><TableCell>{t.role}</TableCell><TableCell sx={{ fontFamily: 'monospace' }}>pat_{t.prefix}…</TableCell>
                  <TableCell>{formatDateTime(t.createdAt)}</TableCell><TableCell>{t.expiresAt ? formatDateTime(t.expiresAt) : 'never'}</TableCell>
                  <TableCell>{t.lastUsedAt ? formatDateTime(t.lastUsedAt) : 'not yet'}</TableCell>
                  <TableCell>{t.revokedAt ? `revoked ${formatDateTime(t.revokedAt)}` : 'active'}</TableCell>
                  <TableCell>{!t.revokedAt && <Button size="small" color="error" onClick={() => void revoke(t)}>Revoke</Button>}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
      </CardContent>
      <Dialog open={secret !== null} aria-labelledby="token-secret-title">
        <DialogTitle id="token-secret-title">Your new API token</DialogTitle>
        <DialogContent>
          <Alert severity="warning" sx={{ mb: 2 }}>Copy it now: it is shown only once; the service keeps only its hash.</Alert>
          <Box component="pre" data-testid="token-secret" sx={{ bgcolor: 'grey.100', p: 1, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}>{secret}</Box>
        </DialogContent>
        <DialogActions><Button onClick={() => setSecret(null)}>I have copied it</Button></DialogActions>
      </Dialog>
    </Card>
  );
}

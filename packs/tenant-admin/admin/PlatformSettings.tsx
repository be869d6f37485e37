import { useEffect, useState } from 'react';
import { Title, useNotify } from 'react-admin';
import { Alert, Box, Button, Card, CardContent, FormControlLabel, Switch, TextField, Typography } from '@mui/material';
import { api, isApiError, session, useApi } from '../../../admin/src/pack-kit.js';

const MASK = '********';
const KEYS = ['SMTP_HOST', 'SMTP_PORT', 'SMTP_USER', 'SMTP_PASSWORD', 'SMTP_FROM', 'FRONTEND_URL', 'INVITE_LOGIN_URL'] as const;

/** Platform settings (superadmin): SMTP with the password masked, and a test mail. */
export default function PlatformSettings() {
  const notify = useNotify();
  const { data } = useApi<Record<string, unknown>>(session.me?.isSuperadmin ? '/platform/settings' : null);
  const [form, setForm] = useState<Record<string, string>>({});
  const [secure, setSecure] = useState(false);
  const [to, setTo] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<string | null>(null);
  useEffect(() => {
    if (data) {
      setForm(Object.fromEntries(KEYS.map((k) => [k, data[k] === null || data[k] === undefined ? '' : String(data[k])])));
      setSecure(data.SMTP_SECURE === true);
    }
  }, [data]);
  if (!session.me?.isSuperadmin) return <Typography sx={{ p: 2 }}>Platform settings need a platform superadmin.</Typography>;

  const save = async () => {
    setError(null);
    const body: Record<string, unknown> = { SMTP_SECURE: secure };
    for (const k of KEYS) body[k] = form[k] === '' ? null : k === 'SMTP_PORT' ? Number(form[k]) : form[k];
    try {
      await api('/platform/settings', { method: 'PATCH', body, noTenant: true });
      notify('Platform settings saved', { type: 'success' });
    } catch (err) {
      setError(isApiError(err) ? `${err.message} ${err.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}` : String(err));
    }
  };
  const test = async () => {
    setResult(null);
    setError(null);
    try {
      const sent = await api<{ messageId: string }>('/platform/settings/smtp/test', { method: 'POST', body: to ? { to } : {}, noTenant: true });
      setResult(`Test mail delivered (${sent.messageId})`);
    } catch (err) {
      setError(isApiError(err) ? `The SMTP server refused or could not be reached: ${err.message}` : String(err));
    }
  };
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Platform settings" />
      <CardContent>
        <Box component="form" onSubmit={(e) => { e.preventDefault(); void save(); }} sx={{ display: 'flex', flexDirection: 'column', gap: 2, maxWidth: 520 }}>
          {KEYS.map((k) => (
            <TextField key={k} id={`setting-${k}`} label={k.replace(/_/g, ' ').toLowerCase().replace(/^\w/, (c) => c.toUpperCase())} value={form[k] ?? ''}
              type={k === 'SMTP_PASSWORD' ? 'password' : k === 'SMTP_PORT' ? 'number' : 'text'}
              helperText={k === 'SMTP_PASSWORD' ? `Shown masked; leave ${MASK} to keep the stored password` : undefined}
              onChange={(e) => setForm({ ...form, [k]: e.target.value })} autoComplete="off" />
          ))}
          <FormControlLabel control={<Switch checked={secure} onChange={(e) => setSecure(e.target.checked)} />} label="SMTP over TLS (secure)" />
          <Box><Button type="submit" variant="contained">Save settings</Button></Box>
        </Box>
        <Box component="form" onSubmit={(e) => { e.preventDefault(); void test(); }} sx={{ display: 'flex', gap: 1, mt: 3, alignItems: 'center' }}>
          <TextField id="test-mail-to" label="Send a test mail to" type="email" value={to} onChange={(e) => setTo(e.target.value)} />
          <Button type="submit" variant="outlined">Send a test mail</Button>
        </Box>
        {result && <Alert severity="success" sx={{ mt: 2 }} role="status">{result}</Alert>}
        {error && <Alert severity="error" sx={{ mt: 2 }} role="alert">{error}</Alert>}
      </CardContent>
    </Card>
  );
}

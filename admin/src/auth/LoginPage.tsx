import { useEffect, useState } from 'react';
import { Alert, Box, Button, Card, CardContent, Divider, TextField, Typography } from '@mui/material';
import { useLogin } from 'react-admin';
import { authConfig, oidcClient, type AuthConfig } from './auth-provider.js';

/** The documented development test key (`npm start` prints it); refused in production. */
const DEV_TEST_KEY = 'dev-test-key';

/** Sign-in: a bearer token pasted by hand, the development test key, or the identity provider (OIDC + PKCE). */
export function LoginPage() {
  const login = useLogin();
  const [token, setToken] = useState('');
  // An OIDC sign-in that failed on /admin/callback left its reason here.
  const [error, setError] = useState<string | null>(() => {
    const failed = sessionStorage.getItem('console.signInError');
    sessionStorage.removeItem('console.signInError');
    return failed;
  });
  const [busy, setBusy] = useState(false);
  const [config, setConfig] = useState<AuthConfig | null>(null);

  useEffect(() => {
    authConfig().then(setConfig, () => setConfig({ testKey: false, oidc: null }));
  }, []);

  const submit = async (value: string) => {
    setBusy(true);
    setError(null);
    try {
      await login({ token: value });
    } catch (err) {
      const status = (err as { status?: number }).status;
      setError(status === 401 ? `The token was refused: ${(err as Error).message}` : err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Box component="main" sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', bgcolor: 'grey.100' }}>
      <Card sx={{ width: 460 }}>
        <CardContent>
          <Typography component="h1" variant="h5" gutterBottom>Admin console</Typography>
          {config?.oidc && (
            <>
              <Button fullWidth variant="contained" onClick={async () => (await oidcClient(config.oidc!)).signinRedirect()}>
                Sign in with your identity provider
              </Button>
              <Divider sx={{ my: 2 }}>or</Divider>
            </>
          )}
          <form onSubmit={(e) => { e.preventDefault(); void submit(token); }}>
            <TextField
              id="token" label="Access token" fullWidth multiline minRows={2} value={token}
              onChange={(e) => setToken(e.target.value)} helperText="A bearer token (JWT) for this service, e.g. from npm run token"
            />
            {error && <Alert severity="error" sx={{ mt: 2 }} role="alert">{error}</Alert>}
            <Button type="submit" fullWidth variant="contained" sx={{ mt: 2 }} disabled={busy || !token.trim()}>Sign in</Button>
          </form>
          {config?.testKey && (
            <Box sx={{ mt: 2 }}>
              <Typography variant="body2" color="text.secondary">
                Development: the service accepts its test key (a platform superadmin; never in production).
              </Typography>
              <Button fullWidth variant="outlined" sx={{ mt: 1 }} disabled={busy} onClick={() => void submit(DEV_TEST_KEY)}>
                Sign in with the development test key
              </Button>
            </Box>
          )}
        </CardContent>
      </Card>
    </Box>
  );
}

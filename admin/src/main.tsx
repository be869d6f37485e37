import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { refreshSchemas } from './api/schemas.js';
import { session } from './api/session.js';
import { completeOidcSignIn } from './auth/auth-provider.js';

async function start() {
  // The identity provider sends the browser back to /admin/callback with a code: trade it, then open the console.
  if (window.location.pathname === '/admin/callback') {
    try {
      await completeOidcSignIn();
    } catch (err) {
      // Said on the sign-in page (which reads and clears it).
      sessionStorage.setItem('console.signInError', `Sign-in with the identity provider failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    window.history.replaceState(null, '', '/admin/');
  }
  // A signed-in visit needs the tenant's schemas for its menu and screens: ask for them while React starts.
  if (session.token && session.tenant) void refreshSchemas();
  createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
}

void start();

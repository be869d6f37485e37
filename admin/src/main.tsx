import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { completeOidcSignIn } from './auth/auth-provider.js';

async function start() {
  // The identity provider sends the browser back to /admin/callback with a code: trade it, then open the console.
  if (window.location.pathname === '/admin/callback') {
    try {
      await completeOidcSignIn();
    } catch (err) {
      console.error('OIDC sign-in failed', err);
    }
    window.history.replaceState(null, '', '/admin/');
  }
  createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
}

void start();

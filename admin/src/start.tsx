import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { completeOidcSignIn } from './auth/auth-provider.js';

/** The console itself, loaded by main.ts (which has started the first screen's requests meanwhile). */
export async function start() {
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
  createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
}


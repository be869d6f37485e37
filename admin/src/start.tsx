import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.js';
import { refreshSchemas } from './api/schemas.js';
import { session } from './api/session.js';
import { completeOidcSignIn, oidcFailure } from './auth/auth-provider.js';
import { registerPackScreens } from './packs/pack-screens.js';
import { packScreens } from '../pack-screens.generated.js';

/** The console itself, loaded by main.ts (which has started the first screen's requests meanwhile). */
export async function start() {
  registerPackScreens(packScreens.map((p) => p.screens));
  // The identity provider sends the browser back to /admin/callback with a code: trade it, then open the console.
  if (window.location.pathname === '/admin/callback') {
    try {
      await completeOidcSignIn();
    } catch (err) {
      // Said on the sign-in page.
      oidcFailure.message = `Sign-in with the identity provider failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    window.history.replaceState(null, '', '/admin/');
  }
  // Signed in: the tenant's schemas first (their request, started by main.ts, has usually answered while this
  // code loaded), so that the first render already has the resources and the screen the URL names, instead of
  // rendering a "not found" and the whole layout again once they arrive. Not waiting more than a second.
  if (session.token && session.tenant) await Promise.race([refreshSchemas(), new Promise((resolve) => setTimeout(resolve, 1000))]);
  createRoot(document.getElementById('root')!).render(<StrictMode><App /></StrictMode>);
}


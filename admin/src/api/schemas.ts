import { useEffect, useSyncExternalStore } from 'react';
import { api } from './client.js';
import { session } from './session.js';
import { hiddenSchemas } from '../packs/pack-screens.js';

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  default?: unknown;
  [key: string]: unknown;
}

export interface SchemaItem {
  namespace: string;
  name: string;
  version: number;
  scope: 'platform' | 'tenant';
  title: string | null;
  description: string | null;
  schema: JsonSchema;
  indexes: string[][];
  unique: string[][];
  /** Only its pack writes its records (its own screens do): no create or edit form here. */
  sealed: boolean;
  /** The content workflow (CONTRACT 17): drafts of its records (`fields`: those a draft may change); with `locales`, its `x-localized` properties hold one value per locale. */
  workflow?: { drafts?: boolean; locales?: boolean; fields?: string[] } | null;
  createdAt: string;
  updatedAt: string;
}

/** The record resource of a schema: `shop.product`. */
export const resourceOf = (s: Pick<SchemaItem, 'namespace' | 'name'>) => `${s.namespace}.${s.name}`;

interface State { tenant: string | null; token: string | null; schemas: SchemaItem[]; loaded: boolean }
let state: State = { tenant: null, token: null, schemas: [], loaded: false };
const listeners = new Set<() => void>();

/**
 * The tenant's schemas (platform and its own), from GET /metadata/schemas: the console's menu and its
 * record screens come from them. Loaded at sign-in and tenant change, and again when a schema is
 * registered or the window regains focus, so a schema registered elsewhere a second ago shows up.
 */
let inFlight: { tenant: string | null; token: string | null; done: Promise<void> } | null = null;
export function refreshSchemas(): Promise<void> {
  // One request at a time per session: start.tsx starts it before the first render, the menu and the
  // resources then share it.
  if (inFlight && inFlight.tenant === session.tenant && inFlight.token === session.token) return inFlight.done;
  const current = { tenant: session.tenant, token: session.token, done: loadSchemas() };
  inFlight = current;
  void current.done.finally(() => { if (inFlight === current) inFlight = null; });
  return current.done;
}

async function loadSchemas(): Promise<void> {
  const { tenant, token } = session;
  if (!token || !tenant) {
    state = { tenant, token, schemas: [], loaded: true };
  } else {
    try {
      const data = await api<{ items: SchemaItem[] }>('/metadata/schemas');
      state = { tenant, token, schemas: data.items.filter((s) => !hiddenSchemas.has(resourceOf(s))), loaded: true };
    } catch {
      state = { tenant, token, schemas: [], loaded: true };
    }
  }
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function findSchema(resource: string): SchemaItem | undefined {
  return state.schemas.find((s) => resourceOf(s) === resource);
}

/** Whether the schemas held are those of the session (start.tsx loads them before the first render). */
const current = () => state.loaded && state.tenant === session.tenant && state.token === session.token;

export function useSchemas(): State {
  const schemas = useSyncExternalStore(subscribe, () => state);
  useEffect(() => {
    // On mount only when not loaded yet: a component that mounts later reads what is held (no state of its
    // own to set, so no second render of each user).
    if (!current()) void refreshSchemas();
    const unsubscribe = session.subscribe(() => void refreshSchemas());
    const onFocus = () => void refreshSchemas();
    window.addEventListener('focus', onFocus);
    return () => {
      unsubscribe();
      window.removeEventListener('focus', onFocus);
    };
  }, []);
  return schemas;
}

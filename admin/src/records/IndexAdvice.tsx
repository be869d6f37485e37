import { useState } from 'react';
import { useListContext, useNotify } from 'react-admin';
import { Alert, Button } from '@mui/material';
import { api, isApiError } from '../api/client.js';
import { refreshSchemas, type SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';

/**
 * The fields of the current filter that no declared index leads (an index on `[a, b]` serves a filter on
 * `a`): on a large collection such a list reads every record, and the service logs it as a slow list.
 * Filter keys are `field` or `field|op` (see data-provider.ts).
 */
export function unindexedFilterFields(schema: SchemaItem, filterValues: Record<string, unknown>): string[] {
  const led = new Set([...schema.indexes, ...schema.unique].map((fields) => fields[0]));
  const fields = Object.entries(filterValues)
    .filter(([, value]) => value !== undefined && value !== null && value !== '')
    .map(([key]) => key.split('|')[0]);
  return [...new Set(fields)].filter((f) => f in (schema.schema.properties ?? {}) && !led.has(f));
}

/**
 * Under the records table's filters: names a filtered field that no index serves and, for an admin, offers
 * to add one. Adding it is a schema change (CONTRACT.md 12.1): the next version with the index, under
 * If-Match of the version shown (a stale one answers 412, said here).
 */
export function IndexAdvice({ schema }: { schema: SchemaItem }) {
  const { filterValues } = useListContext();
  const notify = useNotify();
  const [adding, setAdding] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const fields = unindexedFilterFields(schema, filterValues ?? {});
  if (!fields.length) return null;
  const field = fields[0];
  const canChange = session.can('admin') && schema.scope === 'tenant';

  const addIndex = async () => {
    setAdding(field);
    setError(null);
    try {
      await api(`/metadata/schemas/${schema.namespace}/${schema.name}`, {
        method: 'PUT',
        headers: { 'If-Match': `"${schema.version}"` },
        body: {
          namespace: schema.namespace, name: schema.name, schema: schema.schema,
          ...(schema.title ? { title: schema.title } : {}), ...(schema.description ? { description: schema.description } : {}),
          indexes: [...schema.indexes, [field]], unique: schema.unique,
        },
      });
      await refreshSchemas();
      notify(`Index on ${field} added`, { type: 'success' });
    } catch (err) {
      setError(isApiError(err) ? err.message : String(err));
    } finally {
      setAdding(null);
    }
  };

  return (
    <Alert
      severity="info" role="status" sx={{ mx: 2, my: 1 }}
      action={canChange ? (
        <Button color="inherit" size="small" onClick={() => void addIndex()} disabled={adding !== null}>
          {adding ? 'Adding…' : `Add an index on ${field}`}
        </Button>
      ) : undefined}
    >
      No index serves the filter on <b>{field}</b>: with many records, every list reads them all.
      {canChange ? '' : ' An admin of the tenant can add an index to the schema.'}
      {error && <div role="alert">The index was not added: {error}</div>}
    </Alert>
  );
}

import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, Chip, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { api, isApiError } from '../api/client.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { formatDateTime, summary } from './cells.js';

interface Revision {
  version: number;
  action: 'create' | 'update' | 'delete';
  at: string;
  actor: { type: string; id: string; email?: string };
  data: Record<string, unknown>;
}

/** The fields whose values differ between two versions of a record's data (server fields left out). */
function changes(before: Record<string, unknown> | null, after: Record<string, unknown>): Array<[string, unknown, unknown]> {
  const skip = new Set(['id', 'createdAt', 'updatedAt', 'version']);
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after)]);
  return [...names].filter((n) => !skip.has(n) && JSON.stringify(before?.[n]) !== JSON.stringify(after[n])).map((n) => [n, before?.[n], after[n]]);
}

/**
 * A record's revisions (GET /data/{ns}/{schema}/{id}/revisions), newest first: who changed what and when, each
 * version's changes against the one before it, and Restore (an editor): the version's data becomes the next one.
 */
export function Revisions({ resource }: { resource: string }) {
  const record = useRecordContext<{ id: string; version: number }>();
  const notify = useNotify();
  const refresh = useRefresh();
  const [ns, name] = resource.split('.');
  const path = record ? `/data/${ns}/${name}/${record.id}/revisions?limit=50` : null;
  const { data, error, reload } = useApi<{ items: Revision[] }>(path);
  const [open, setOpen] = useState<number | null>(null);
  if (!record) return null;
  const items = data?.items ?? [];
  const restore = async (version: number) => {
    try {
      await api(`/data/${ns}/${name}/${record.id}/revisions/${version}/restore`, { method: 'POST' });
      notify(`Version ${version} restored as a new version`, { type: 'success' });
      refresh();
      reload();
    } catch (err) {
      notify(isApiError(err) ? err.message : String(err), { type: 'error' });
    }
  };
  return (
    <Box component="section" aria-label="Revisions" sx={{ p: 2 }}>
      <Typography component="h2" variant="h6">Revisions</Typography>
      {error && <Alert severity="warning">The revisions could not be read: {error.message}</Alert>}
      {data && !items.length && <Typography>No revisions are kept for this record.</Typography>}
      {!!items.length && (
        <Table size="small" aria-label="Revisions">
          <TableHead>
            <TableRow><TableCell>Version</TableCell><TableCell>Change</TableCell><TableCell>When</TableCell><TableCell>By</TableCell><TableCell>Action</TableCell></TableRow>
          </TableHead>
          <TableBody>
            {items.map((r, i) => {
              const diff = changes(items[i + 1]?.data ?? null, r.data);
              return [
                <TableRow key={r.version} data-testid="revision-row">
                  <TableCell>{r.version}{r.version === record.version && <Chip size="small" label="current" sx={{ ml: 1 }} />}</TableCell>
                  <TableCell>{r.action}{diff.length ? `: ${diff.map(([n]) => n).join(', ')}` : ''}</TableCell>
                  <TableCell>{formatDateTime(r.at)}</TableCell>
                  <TableCell>{r.actor.email ?? r.actor.id}</TableCell>
                  <TableCell>
                    <Button size="small" aria-expanded={open === r.version} onClick={() => setOpen(open === r.version ? null : r.version)}>{open === r.version ? 'Hide' : 'Changes'}</Button>
                    {session.can('editor') && r.version !== record.version && r.action !== 'delete' && (
                      <Button size="small" onClick={() => void restore(r.version)}>Restore</Button>
                    )}
                  </TableCell>
                </TableRow>,
                open === r.version && (
                  <TableRow key={`${r.version}-diff`}>
                    <TableCell colSpan={5}>
                      <Table size="small" aria-label={`Changes of version ${r.version}`} data-testid="revision-diff">
                        <TableHead><TableRow><TableCell>Field</TableCell><TableCell>Before</TableCell><TableCell>After</TableCell></TableRow></TableHead>
                        <TableBody>
                          {diff.map(([field, before, after]) => (
                            <TableRow key={field}>
                              <TableCell>{field}</TableCell>
                              <TableCell sx={{ color: 'error.dark' }}>{before === undefined ? '—' : summary(before)}</TableCell>
                              <TableCell sx={{ color: 'success.dark' }}>{after === undefined ? '—' : summary(after)}</TableCell>
                            </TableRow>
                          ))}
                        </TableBody>
                      </Table>
                    </TableCell>
                  </TableRow>
                ),
              ];
            })}
          </TableBody>
        </Table>
      )}
    </Box>
  );
}

import { useCallback, useEffect, useRef, useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, Chip, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { useFormContext } from 'react-hook-form';
import { api, isApiError } from '../api/client.js';
import { mergePatch } from '../api/data-provider.js';
import type { JsonSchema, SchemaItem } from '../api/schemas.js';
import { cellFor, formatDateTime } from '../records/cells.js';
import { properties } from '../records/Records.js';

/** A record's draft as GET …/draft answers it (docs/content-workflow.md). */
export interface DraftView {
  item: Record<string, unknown>;
  draft: {
    baseVersion: number; revision: number; updatedAt: string; updatedBy: string | null; scheduledAt: string | null;
    lastError: { code: string; message: string } | null; releaseId: string | null;
  };
}

/** A value as the diff shows it: text in full, the rest as the table formats it. */
function shownValue(name: string, s: JsonSchema, record: Record<string, unknown>): string {
  const value = record[name];
  if (typeof value === 'string' && !s.format) return value;
  return cellFor(name, s)(record);
}

const isEmpty = (v: unknown) => v === undefined || v === null || ['{}', '[]'].includes(JSON.stringify(v));

/** The form's changes against the live record, leaving out empty groups the form adds for absent fields. */
function changesOf(values: Record<string, unknown>, live: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(mergePatch(values, live)).filter(([key, v]) => !(isEmpty(v) && live[key] === undefined)));
}

/** The fields whose draft value differs from the live one, labelled by their titles. */
export function draftChanges(schema: SchemaItem, live: Record<string, unknown>, draft: Record<string, unknown>) {
  return Object.entries(properties(schema))
    .filter(([name]) => !(isEmpty(live[name]) && isEmpty(draft[name])) && JSON.stringify(live[name] ?? null) !== JSON.stringify(draft[name] ?? null))
    .map(([name, s]) => ({ name, label: s.title || name, live: shownValue(name, s, live), draft: shownValue(name, s, draft) }));
}

export function DraftDiff({ schema, live, draft }: { schema: SchemaItem; live: Record<string, unknown>; draft: Record<string, unknown> }) {
  const changes = draftChanges(schema, live, draft);
  if (!changes.length) return <Typography variant="body2">The draft changes no field.</Typography>;
  return (
    <Table size="small" aria-label="Draft changes">
      <TableHead><TableRow><TableCell>Field</TableCell><TableCell>Live</TableCell><TableCell>Draft</TableCell></TableRow></TableHead>
      <TableBody>
        {changes.map((c) => (
          <TableRow key={c.name} data-testid="draft-change">
            <TableCell component="th" scope="row">{c.label}</TableCell>
            <TableCell sx={{ whiteSpace: 'pre-wrap' }}>{c.live || '—'}</TableCell>
            <TableCell sx={{ whiteSpace: 'pre-wrap' }}>{c.draft || '—'}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
}

/**
 * The draft bar of a record's edit form, for a schema with `workflow.drafts`: the record's state (live only, draft,
 * scheduled, the last error of a scheduled publish, its release), "Save draft" (the form's changes against the
 * draft, else the live record, as a merge patch over the draft), "Diff" (the draft's changes field by field beside
 * the live values), Publish, Schedule, Unschedule and Discard. With a draft, the form holds the draft's values;
 * without, the live record's. Nothing here changes the live record except Publish. `locale`: the form's locale
 * other than the default (its own values, `?locale=…&fallback=false`; CONTRACT.md 17.2).
 */
export function DraftBar({ schema, locale }: { schema: SchemaItem; locale?: string }) {
  const record = useRecordContext();
  const form = useFormContext();
  const notify = useNotify();
  const refresh = useRefresh();
  const [view, setView] = useState<DraftView | null>(null);
  const [loaded, setLoaded] = useState(false);
  const [diff, setDiff] = useState(false);
  const [at, setAt] = useState('');
  const [error, setError] = useState<string | null>(null);
  const path = record ? `/data/${schema.namespace}/${schema.name}/${record.id}/draft` : null;
  const query = locale ? `?locale=${encodeURIComponent(locale)}` : '';
  // What the form was last filled with: the draft's revision, or 0 for the live record.
  const shown = useRef<string | null>(null);

  const load = useCallback(async () => {
    if (!path) return;
    let next: DraftView | null = null;
    try {
      next = await api<DraftView>(`${path}${query}${query ? '&fallback=false' : ''}`);
    } catch (err) {
      if (!isApiError(err) || err.status !== 404) throw err;
    }
    setView(next);
    setLoaded(true);
    // The form edits the draft when there is one: its values replace the live record's (once per saved revision).
    // Without one it shows the live record, once per version: after a publish the draft is gone before the
    // record's new version is read, and the form must take that version when it comes, not keep the one before.
    const shows = `${next?.draft.revision ?? 0}@${record?.version ?? 0}`;
    if (shown.current !== shows && (next || shown.current !== null)) form.reset(next ? next.item : record);
    shown.current = shows;
  }, [path, query, form, record]);
  useEffect(() => { void load(); }, [load, record?.version]);

  if (!record || !path || !loaded) return null;
  const act = async (label: string, run: () => Promise<unknown>) => {
    setError(null);
    try {
      await run();
      notify(label, { type: 'success' });
    } catch (err) {
      setError(isApiError(err) ? [err.message, ...err.issues.map((i) => `${i.path}: ${i.message}`)].join(' — ') : String(err));
    }
    await load();
  };
  const saveDraft = () => act('Draft saved', () => api(`${path}${query}`, { method: 'PUT', body: changesOf(form.getValues(), view?.item ?? record) }));
  const publish = () => act('Draft published', async () => {
    await api(`${path}/publish`, { method: 'POST' });
    refresh();
  });
  const schedule = () => act('Publish scheduled', () => api(`${path}/publish`, { method: 'POST', body: { at: new Date(at).toISOString() } }));
  const unschedule = () => act('Publish unscheduled', () => api(`${path}/schedule`, { method: 'DELETE' }));
  const discard = () => act('Draft discarded', () => api(path, { method: 'DELETE' }));
  const draft = view?.draft;
  const bound = !!draft?.releaseId;

  return (
    <Box component="section" aria-label="Draft" data-testid="draft-bar" sx={{ width: '100%', mb: 2, p: 2, border: 1, borderColor: 'divider', borderRadius: 1 }}>
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, flexWrap: 'wrap' }}>
        <Typography component="h2" variant="subtitle1" sx={{ mr: 1 }}>Draft</Typography>
        <Chip size="small" data-testid="draft-state" label={draft ? (draft.scheduledAt ? 'Scheduled' : 'Draft') : 'Live'} color={draft ? 'secondary' : 'success'} />
        <Typography variant="body2" data-testid="draft-summary">
          {draft
            ? `Live version ${record.version}; draft saved ${formatDateTime(draft.updatedAt)} from version ${draft.baseVersion}`
            : `Live version ${record.version}, no draft`}
          {draft?.scheduledAt ? `; publishes at ${formatDateTime(draft.scheduledAt)}` : ''}
          {bound ? `; in release ${draft?.releaseId}` : ''}
        </Typography>
      </Box>
      {draft?.lastError && (
        <Alert severity="error" sx={{ mt: 1 }}>The scheduled publish failed: {draft.lastError.message} ({draft.lastError.code})</Alert>
      )}
      {error && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{error}</Alert>}
      {view && diff && <Box sx={{ mt: 1 }}><DraftDiff schema={schema} live={record} draft={view.item} /></Box>}
      <Box sx={{ display: 'flex', alignItems: 'center', gap: 1, mt: 1, flexWrap: 'wrap' }}>
        <Button variant="outlined" onClick={() => void saveDraft()}>Save draft</Button>
        {view && <Button aria-pressed={diff} onClick={() => setDiff(!diff)}>Diff</Button>}
        {draft && !bound && <Button variant="contained" onClick={() => void publish()}>Publish</Button>}
        {draft && !bound && !draft.scheduledAt && (
          <>
            <TextField
              id="draft-publish-at" label="Publish at" type="datetime-local" value={at} onChange={(e) => setAt(e.target.value)}
              slotProps={{ inputLabel: { shrink: true } }} sx={{ my: 0 }}
            />
            <Button disabled={!at} onClick={() => void schedule()}>Schedule</Button>
          </>
        )}
        {draft?.scheduledAt && <Button onClick={() => void unschedule()}>Unschedule</Button>}
        {draft && <Button color="error" onClick={() => void discard()}>Discard draft</Button>}
      </Box>
    </Box>
  );
}

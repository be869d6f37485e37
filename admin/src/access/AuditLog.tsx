import { useState } from 'react';
import { Title } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { Box, Button, Card, CardContent, Link, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { query } from '../api/client.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { formatDateTime } from '../records/cells.js';

interface Entry { id: string; at: string; actor: { type: string; id: string; email?: string }; action: string; target: string; requestId: string }
interface Filters { actor: string; action: string; target: string; from: string; to: string }

const PAGE = 50;
const EMPTY: Filters = { actor: '', action: '', target: '', from: '', to: '' };
/** A datetime-local value (the user's local time) as an ISO instant. */
const instant = (local: string) => (local ? new Date(local).toISOString() : '');

/** The tenant's audit log (GET /tenants/{id}/audit-log, admins), newest first, filtered by actor, action, target and time. */
export default function AuditLog() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [page, setPage] = useState(0);
  const path = `/tenants/${session.tenant}/audit-log${query({
    limit: PAGE, offset: page * PAGE, actor: filters.actor, action: filters.action, target: filters.target, from: instant(filters.from), to: instant(filters.to),
  })}`;
  const { data, error } = useApi<{ items: Entry[]; pagination: { hasMore: boolean } }>(session.tenant ? path : null);
  const field = (name: keyof Filters, label: string, type = 'text') => (
    <TextField
      id={`audit-${name}`} label={label} type={type} value={draft[name]} onChange={(e) => setDraft({ ...draft, [name]: e.target.value })}
      {...(type === 'datetime-local' ? { slotProps: { inputLabel: { shrink: true } } } : {})}
    />
  );
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Audit log" />
      <CardContent>
        <Typography component="h1" variant="h5" gutterBottom>Audit log</Typography>
        <Typography gutterBottom>Every change of this tenant with who made it, newest first. Entries are never changed or deleted here.</Typography>
        <Box component="form" aria-label="Filters" sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center', mb: 2 }}
          onSubmit={(e) => { e.preventDefault(); setPage(0); setFilters(draft); }}>
          {field('actor', 'Actor id')}
          {field('action', 'Action (record.updated)')}
          {field('target', 'Target (shop.product/<id>)')}
          {field('from', 'From', 'datetime-local')}
          {field('to', 'To', 'datetime-local')}
          <Button type="submit" variant="contained">Filter</Button>
          <Button onClick={() => { setDraft(EMPTY); setFilters(EMPTY); setPage(0); }}>Clear</Button>
        </Box>
        {error && <Typography role="alert" color="error">{error.message}</Typography>}
        {data && !data.items.length && <Typography>No entries{filters === EMPTY ? ' yet: changes made here or through the API are listed as they happen' : ' match these filters'}.</Typography>}
        {!!data?.items.length && (
          <Table size="small" aria-label="Audit log">
            <TableHead>
              <TableRow><TableCell>When</TableCell><TableCell>Actor</TableCell><TableCell>Action</TableCell><TableCell>Target</TableCell><TableCell>Request</TableCell></TableRow>
            </TableHead>
            <TableBody>
              {data.items.map((e) => {
                const [resource, id] = e.target.split('/');
                const linked = e.action.startsWith('record.') && e.action !== 'record.deleted' && id;
                return (
                  <TableRow key={e.id} data-testid="audit-row">
                    <TableCell>{formatDateTime(e.at)}</TableCell>
                    <TableCell>{e.actor.email ?? e.actor.id} ({e.actor.type})</TableCell>
                    <TableCell>{e.action}</TableCell>
                    <TableCell>{linked ? <Link component={RouterLink} to={`/${resource}/${id}/show`}>{e.target}</Link> : e.target}</TableCell>
                    <TableCell sx={{ fontFamily: 'monospace', fontSize: 12 }}>{e.requestId}</TableCell>
                  </TableRow>
                );
              })}
            </TableBody>
          </Table>
        )}
        <Box sx={{ display: 'flex', gap: 1, mt: 1 }}>
          <Button disabled={page === 0} onClick={() => setPage(page - 1)}>Newer</Button>
          <Button disabled={!data?.pagination.hasMore} onClick={() => setPage(page + 1)}>Older</Button>
        </Box>
      </CardContent>
    </Card>
  );
}

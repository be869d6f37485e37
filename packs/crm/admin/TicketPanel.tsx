import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { call, formatDateTime, isApiError, session } from '../../../admin/src/pack-kit.js';

/**
 * Support tickets (PQRS, `crm.ticket`) are sealed, written only through /crm/support-tickets: beside the generated
 * table and record page, the ticket's status moves with its history (this panel) and a "new ticket" form
 * generated from the route's body in the OpenAPI document (TicketCreate.tsx).
 */

export interface Ticket { id: string; number: string; status: string; version: number; history?: Array<{ at: string; by: string; from: string | null; to: string }> }

/** The contract's status machine (11.5): any other move answers 409 invalid_transition. */
const MOVES: Record<string, Array<{ to: string; label: string }>> = {
  new: [{ to: 'open', label: 'Open' }, { to: 'resolved', label: 'Resolve' }],
  open: [{ to: 'pending_customer', label: 'Wait for the customer' }, { to: 'resolved', label: 'Resolve' }],
  pending_customer: [{ to: 'open', label: 'Open' }, { to: 'resolved', label: 'Resolve' }],
  resolved: [{ to: 'closed', label: 'Close' }, { to: 'open', label: 'Reopen' }],
  closed: [],
};

/** On a ticket's page: its status, the moves allowed from it, and its history (every move, who and when). */
export default function TicketPanel() {
  const ticket = useRecordContext<Ticket>();
  const notify = useNotify();
  const refresh = useRefresh();
  const [error, setError] = useState<string | null>(null);
  if (!ticket) return null;
  const move = async (status: string) => {
    setError(null);
    try {
      // If-Match: a move made meanwhile by someone else answers 412 instead of being overwritten.
      await call(`/crm/support-tickets/${ticket.id}`, { method: 'PATCH', body: { status }, headers: { 'If-Match': `"${ticket.version}"` } });
      notify(`Ticket ${ticket.number}: ${status.replace('_', ' ')}`, { type: 'success' });
      refresh();
    } catch (err) {
      if (!isApiError(err)) throw err;
      setError(err.status === 412 ? 'The ticket changed meanwhile: it was reloaded, try again.' : err.message);
      refresh();
    }
  };
  return (
    <Box component="section" aria-label="Ticket status" sx={{ p: 2 }}>
      <Box sx={{ display: 'flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
        <Typography>Status: <strong data-testid="ticket-status">{ticket.status}</strong></Typography>
        {session.can('editor') && (MOVES[ticket.status] ?? []).map((m) => (
          <Button key={m.to} variant="contained" size="small" onClick={() => void move(m.to)}>{m.label}</Button>
        ))}
      </Box>
      {error && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{error}</Alert>}
      <Typography component="h2" variant="h6" sx={{ mt: 2 }}>History</Typography>
      <Table size="small" aria-label="Ticket history">
        <TableHead><TableRow><TableCell>When</TableCell><TableCell>By</TableCell><TableCell>From</TableCell><TableCell>To</TableCell></TableRow></TableHead>
        <TableBody>
          {(ticket.history ?? []).map((h, i) => (
            <TableRow key={`${h.at}-${i}`} data-testid="history-row">
              <TableCell>{formatDateTime(h.at)}</TableCell><TableCell>{h.by}</TableCell><TableCell>{h.from ?? '—'}</TableCell><TableCell>{h.to}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, Typography } from '@mui/material';
import { api, isApiError, session } from '../../../admin/src/pack-kit.js';

/** The contract's order life cycle: placed → paid → fulfilled, placed | paid → cancelled. */
const NEXT: Record<string, string[]> = { placed: ['paid', 'cancelled'], paid: ['fulfilled', 'cancelled'], fulfilled: [], cancelled: [] };

/** On an order's page: its status and the transitions allowed from it, as buttons (PATCH /erp/orders/{id}). */
export default function OrderTransitions() {
  const order = useRecordContext<{ id: string; status: string }>();
  const notify = useNotify();
  const refresh = useRefresh();
  const [error, setError] = useState<string | null>(null);
  if (!order || !session.can('editor')) return null;
  const move = async (status: string) => {
    setError(null);
    try {
      await api(`/erp/orders/${order.id}`, { method: 'PATCH', body: { status } });
      notify(`Order ${status}`, { type: 'success' });
      refresh();
    } catch (err) {
      if (!isApiError(err)) throw err;
      setError(err.message);
    }
  };
  const next = NEXT[order.status] ?? [];
  return (
    <Box component="section" aria-label="Status" sx={{ p: 2, display: 'flex', gap: 1, alignItems: 'center' }}>
      <Typography>Status: <strong>{order.status}</strong></Typography>
      {next.map((status) => (
        <Button key={status} variant={status === 'cancelled' ? 'outlined' : 'contained'} color={status === 'cancelled' ? 'error' : 'primary'} onClick={() => void move(status)}>
          {status === 'cancelled' ? 'Cancel order' : `Mark ${status}`}
        </Button>
      ))}
      {error && <Alert severity="error" role="alert">{error}</Alert>}
    </Box>
  );
}

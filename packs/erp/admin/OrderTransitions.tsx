import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, Typography } from '@mui/material';
import { api, formatMoney, session } from '../../../admin/src/pack-kit.js';
import { errorText } from './error-text.js';
import type { ShopOrder } from './OrderParts.js';

/**
 * The moves an editor makes by status (PATCH /erp/orders/{id}): a placed order is marked paid (a manual payment of
 * what is left) or cancelled; a pending card payment can be cancelled. Shipping is the Fulfilments section's
 * ("Ship the rest"). Cancelling a paid order refunds what is left of its payment first, so it needs an admin and a
 * second click that names the amount.
 */
export default function OrderTransitions() {
  const order = useRecordContext<ShopOrder>();
  const notify = useNotify();
  const refresh = useRefresh();
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  if (!order || !session.can('editor')) return null;
  const move = async (status: string) => {
    setError(null);
    setConfirming(false);
    try {
      await api(`/erp/orders/${order.id}`, { method: 'PATCH', body: { status } });
      notify(`Order ${status}`, { type: 'success' });
      refresh();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const paid = order.status === 'paid';
  const left = order.totalCents - (order.refundedCents ?? 0);
  const canCancel = ['placed', 'pending_payment'].includes(order.status) || (paid && session.can('admin'));
  return (
    <Box component="section" aria-label="Status" sx={{ p: 2, display: 'flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
      <Typography>Status: <strong data-testid="order-status">{order.status}</strong></Typography>
      {order.status === 'placed' && <Button variant="contained" onClick={() => void move('paid')}>Mark paid</Button>}
      {canCancel && !confirming && (
        <Button variant="outlined" color="error" onClick={() => (paid ? setConfirming(true) : void move('cancelled'))}>Cancel order</Button>
      )}
      {confirming && (
        <>
          <Typography>Refund {formatMoney(left, order.currency)} and cancel?</Typography>
          <Button variant="contained" color="error" onClick={() => void move('cancelled')}>Refund and cancel</Button>
          <Button onClick={() => setConfirming(false)}>Keep the order</Button>
        </>
      )}
      {error && <Alert severity="error" role="alert">{error}</Alert>}
    </Box>
  );
}

import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, FormControlLabel, Radio, RadioGroup, Table, TableBody, TableCell, TableHead,
  TableRow, TextField, Typography,
} from '@mui/material';
import { api, formatDateTime, formatMoney, minorDigits, parseDecimal, session } from '../../../admin/src/pack-kit.js';
import { errorText } from './error-text.js';
import { leftToShip } from '../shared/order-units.js';

interface Units { sku: string; quantity: number }
interface Line extends Units { name: string; totalCents: number }
interface Payment { provider: string; method?: string | null; reference: string | null; amountCents: number; at: string }
interface Fulfilment { id: string; items: Units[]; carrier: string | null; trackingNumber: string | null; trackingUrl: string | null; createdAt: string }
interface Refund { id: string; amountCents: number; items: Units[]; restock: boolean; reason: string | null; status: string; createdAt: string }
export interface ShopOrder {
  id: string; status: string; currency: string; paymentMethod?: string; paymentStatus?: string; fulfillmentStatus?: string;
  totalCents: number; refundedCents?: number; items: Line[]; payments?: Payment[]; fulfillments?: Fulfilment[]; refunds?: Refund[];
}

/** Per sku: the units ordered less those already refunded (a unit is refunded once). */
function unrefunded(order: ShopOrder): Map<string, number> {
  const left = new Map(order.items.map((line) => [line.sku, line.quantity]));
  for (const r of order.refunds ?? []) if (r.status !== 'failed') for (const u of r.items) left.set(u.sku, (left.get(u.sku) ?? 0) - u.quantity);
  return left;
}

/** A quantity field per line with units left; answers the non-zero ones. */
function UnitsPicker({ prefix, left, value, onChange }: { prefix: string; left: Map<string, number>; value: Record<string, string>; onChange: (v: Record<string, string>) => void }) {
  return (
    <Box sx={{ display: 'flex', gap: 1, flexWrap: 'wrap' }}>
      {[...left].filter(([, n]) => n > 0).map(([sku, n]) => (
        <TextField key={sku} id={`${prefix}-${sku}`} label={`${sku} (of ${n})`} size="small" type="number" sx={{ width: 150 }}
          slotProps={{ htmlInput: { min: 0, max: n } }} value={value[sku] ?? ''} onChange={(e) => onChange({ ...value, [sku]: e.target.value })} />
      ))}
    </Box>
  );
}

const picked = (value: Record<string, string>): Units[] =>
  Object.entries(value).map(([sku, q]) => ({ sku, quantity: Number(q) })).filter((u) => Number.isInteger(u.quantity) && u.quantity > 0);

/**
 * On an order's page (CONTRACT 15.3/15.4): its payments, parcels and refunds, with the actions on them through the
 * public API: ship a parcel (some units, carrier and tracking) or the rest, refund by amount or by items (optionally
 * restocked). Each action's error (409 invalid_transition, refund_exceeds_payment, …) is shown beside it.
 */
export default function OrderParts() {
  const order = useRecordContext<ShopOrder>();
  if (!order || !session.can('viewer')) return null;
  return (
    <Box sx={{ p: 2, display: 'flex', flexDirection: 'column', gap: 2 }}>
      <Payments order={order} />
      <Fulfilments order={order} />
      <Refunds order={order} />
    </Box>
  );
}

function Payments({ order }: { order: ShopOrder }) {
  const payments = order.payments ?? [];
  return (
    <Card component="section" aria-label="Payments" variant="outlined">
      <CardContent>
        <Typography component="h2" variant="h6">Payments</Typography>
        <Typography gutterBottom>
          Payment <strong data-testid="payment-status">{order.paymentStatus ?? 'pending'}</strong> by {order.paymentMethod ?? '—'};
          total {formatMoney(order.totalCents, order.currency)}, refunded {formatMoney(order.refundedCents ?? 0, order.currency)}
        </Typography>
        {!payments.length ? <Typography>No payment yet.</Typography> : (
          <Table size="small" aria-label="Payments">
            <TableHead><TableRow><TableCell>Provider</TableCell><TableCell>Reference</TableCell><TableCell>Amount</TableCell><TableCell>At</TableCell></TableRow></TableHead>
            <TableBody>
              {payments.map((p, i) => (
                <TableRow key={i} data-testid="payment">
                  <TableCell>{p.method ? `${p.provider} (${p.method})` : p.provider}</TableCell><TableCell>{p.reference ?? '—'}</TableCell>
                  <TableCell>{formatMoney(p.amountCents, order.currency)}</TableCell><TableCell>{formatDateTime(p.at)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
      </CardContent>
    </Card>
  );
}

function useAction() {
  const notify = useNotify();
  const refresh = useRefresh();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (done: string, action: () => Promise<unknown>) => {
    setError(null);
    setBusy(true);
    try {
      await action();
      notify(done, { type: 'success' });
      refresh();
      return true;
    } catch (err) {
      setError(errorText(err));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

const units = (items: Units[]) => items.map((u) => `${u.quantity} × ${u.sku}`).join(', ');

function Fulfilments({ order }: { order: ShopOrder }) {
  const parcels = order.fulfillments ?? [];
  const left = new Map(order.items.map((line) => [line.sku, leftToShip(order, line.sku)]));
  const [quantities, setQuantities] = useState<Record<string, string>>({});
  const [carrier, setCarrier] = useState('');
  const [trackingNumber, setTrackingNumber] = useState('');
  const [trackingUrl, setTrackingUrl] = useState('');
  const { error, busy, run } = useAction();
  const remaining = [...left.values()].some((n) => n > 0);
  const ship = () => run('Parcel shipped', async () => {
    const tracking = { carrier: carrier || undefined, trackingNumber: trackingNumber || undefined, trackingUrl: trackingUrl || undefined };
    await api(`/erp/orders/${order.id}/fulfillments`, { method: 'POST', body: { items: picked(quantities), ...tracking } });
    setQuantities({});
    setTrackingNumber('');
    setTrackingUrl('');
  });
  const shipRest = () => run('Order fulfilled', () => api(`/erp/orders/${order.id}`, { method: 'PATCH', body: { status: 'fulfilled' } }));
  return (
    <Card component="section" aria-label="Fulfilments" variant="outlined">
      <CardContent>
        <Typography component="h2" variant="h6">Fulfilments</Typography>
        <Typography gutterBottom>Fulfilment <strong data-testid="fulfillment-status">{order.fulfillmentStatus ?? 'unfulfilled'}</strong></Typography>
        {!parcels.length ? <Typography>Nothing shipped yet.</Typography> : (
          <Table size="small" aria-label="Parcels">
            <TableHead><TableRow><TableCell>Items</TableCell><TableCell>Carrier</TableCell><TableCell>Tracking</TableCell><TableCell>Shipped</TableCell></TableRow></TableHead>
            <TableBody>
              {parcels.map((f) => (
                <TableRow key={f.id} data-testid="fulfillment">
                  <TableCell>{units(f.items)}</TableCell><TableCell>{f.carrier ?? '—'}</TableCell>
                  <TableCell>{f.trackingUrl ? <a href={f.trackingUrl} target="_blank" rel="noreferrer">{f.trackingNumber ?? f.trackingUrl}</a> : (f.trackingNumber ?? '—')}</TableCell>
                  <TableCell>{formatDateTime(f.createdAt)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
        {session.can('editor') && remaining && order.status !== 'cancelled' && (
          <Box component="form" aria-label="Ship a parcel" sx={{ mt: 2, display: 'flex', flexDirection: 'column', gap: 1 }}
            onSubmit={(e) => { e.preventDefault(); void ship(); }}>
            <Typography component="h3" variant="subtitle1">Ship a parcel</Typography>
            <UnitsPicker prefix="ship" left={left} value={quantities} onChange={setQuantities} />
            <Box sx={{ display: 'flex', gap: 1, flexWrap: 'wrap' }}>
              <TextField id="ship-carrier" label="Carrier" size="small" value={carrier} onChange={(e) => setCarrier(e.target.value)} />
              <TextField id="ship-tracking-number" label="Tracking number" size="small" value={trackingNumber} onChange={(e) => setTrackingNumber(e.target.value)} />
              <TextField id="ship-tracking-url" label="Tracking URL" size="small" type="url" value={trackingUrl} onChange={(e) => setTrackingUrl(e.target.value)} />
            </Box>
            <Box sx={{ display: 'flex', gap: 1 }}>
              <Button type="submit" variant="contained" disabled={busy || !picked(quantities).length}>Ship parcel</Button>
              <Button variant="outlined" disabled={busy} onClick={() => void shipRest()}>Ship the rest</Button>
            </Box>
          </Box>
        )}
        {error && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{error}</Alert>}
      </CardContent>
    </Card>
  );
}

function Refunds({ order }: { order: ShopOrder }) {
  const refunds = order.refunds ?? [];
  const left = unrefunded(order);
  const [mode, setMode] = useState<'amount' | 'items'>('amount');
  const [amount, setAmount] = useState('');
  const [quantities, setQuantities] = useState<Record<string, string>>({});
  const [restock, setRestock] = useState(false);
  const [reason, setReason] = useState('');
  const { error, busy, run } = useAction();
  const cents = parseDecimal(amount, minorDigits(order.currency));
  const ready = mode === 'amount' ? cents !== undefined && cents > 0 : picked(quantities).length > 0;
  const refund = () => run('Refund recorded', async () => {
    const body = mode === 'amount' ? { amountCents: cents } : { items: picked(quantities), restock };
    // One key per attempt: a retried click after a lost answer is the same refund, never a second one.
    await api(`/erp/orders/${order.id}/refunds`, {
      method: 'POST', body: { ...body, reason: reason || undefined }, headers: { 'Idempotency-Key': crypto.randomUUID() },
    });
    setAmount('');
    setQuantities({});
    setReason('');
  });
  return (
    <Card component="section" aria-label="Refunds" variant="outlined">
      <CardContent>
        <Typography component="h2" variant="h6">Refunds</Typography>
        {!refunds.length ? <Typography>No refunds.</Typography> : (
          <Table size="small" aria-label="Refunds">
            <TableHead><TableRow><TableCell>Amount</TableCell><TableCell>Items</TableCell><TableCell>Status</TableCell><TableCell>Reason</TableCell><TableCell>At</TableCell></TableRow></TableHead>
            <TableBody>
              {refunds.map((r) => (
                <TableRow key={r.id} data-testid="refund">
                  <TableCell>{formatMoney(r.amountCents, order.currency)}</TableCell>
                  <TableCell>{r.items.length ? `${units(r.items)}${r.restock ? ' (restocked)' : ''}` : '—'}</TableCell>
                  <TableCell>{r.status}</TableCell><TableCell>{r.reason ?? '—'}</TableCell><TableCell>{formatDateTime(r.createdAt)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
        {session.can('admin') && (
          <Box component="form" aria-label="Refund" sx={{ mt: 2, display: 'flex', flexDirection: 'column', gap: 1 }}
            onSubmit={(e) => { e.preventDefault(); void refund(); }}>
            <Typography component="h3" variant="subtitle1">Refund</Typography>
            <RadioGroup row aria-label="Refund by" value={mode} onChange={(e) => setMode(e.target.value as 'amount' | 'items')}>
              <FormControlLabel value="amount" control={<Radio />} label="By amount" />
              <FormControlLabel value="items" control={<Radio />} label="By items" />
            </RadioGroup>
            {mode === 'amount'
              ? (
                <TextField id="refund-amount" label={`Amount (${order.currency})`} size="small" sx={{ width: 200 }} value={amount} onChange={(e) => setAmount(e.target.value)}
                  error={amount !== '' && cents === undefined} helperText={amount !== '' && cents === undefined ? 'An amount such as 12.50' : ' '} />
              )
              : (
                <>
                  <UnitsPicker prefix="refund" left={left} value={quantities} onChange={setQuantities} />
                  <FormControlLabel control={<Checkbox checked={restock} onChange={(e) => setRestock(e.target.checked)} />} label="Put the items back into stock" />
                </>
              )}
            <TextField id="refund-reason" label="Reason" size="small" value={reason} onChange={(e) => setReason(e.target.value)} />
            <Box><Button type="submit" variant="contained" disabled={busy || !ready}>Refund</Button></Box>
          </Box>
        )}
        {error && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{error}</Alert>}
      </CardContent>
    </Card>
  );
}

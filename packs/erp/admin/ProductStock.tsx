import { useState } from 'react';
import { useNotify, useRecordContext, useRefresh } from 'react-admin';
import { Alert, Box, Button, MenuItem, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { api, isApiError, session, useApi } from '../../../admin/src/pack-kit.js';

/**
 * On a product's page and edit form, what its schema cannot say: its stock adjustments (admin; POST
 * /erp/products/{id}/stock-adjustments) and its stock ledger (GET /erp/products/{id}/stock-movements).
 */

interface Movement { id: string; delta: number; reason: string; orderId: string | null; note: string | null; stockAfter: number; createdAt: string }

export default function ProductStock() {
  const product = useRecordContext<{ id: string; physicalStock?: number }>();
  const notify = useNotify();
  const refresh = useRefresh();
  const ledger = useApi<{ items: Movement[] }>(product ? `/erp/products/${product.id}/stock-movements?limit=200` : null);
  const [delta, setDelta] = useState('');
  const [reason, setReason] = useState('restock');
  const [note, setNote] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!product) return null;
  const adjust = async () => {
    setError(null);
    try {
      await api(`/erp/products/${product.id}/stock-adjustments`, { method: 'POST', body: { delta: Number(delta), reason, ...(note ? { note } : {}) } });
      notify('Stock adjusted', { type: 'success' });
      setDelta('');
      setNote('');
      ledger.reload();
      refresh();
    } catch (err) {
      if (!isApiError(err)) throw err;
      setError(err.code === 'insufficient_stock' ? 'Not enough stock: the adjustment would take the stock below 0 (nothing was written).' : err.message);
    }
  };
  return (
    <Box component="section" aria-label="Stock" sx={{ p: 2 }}>
      <Typography component="h2" variant="h6">Stock: {product.physicalStock ?? 0}</Typography>
      {session.can('admin') && (
        <Box component="form" onSubmit={(e) => { e.preventDefault(); void adjust(); }} sx={{ display: 'flex', gap: 1, alignItems: 'center', flexWrap: 'wrap' }}>
          <TextField id="stock-delta" label="Change (+/-)" type="number" value={delta} onChange={(e) => setDelta(e.target.value)} sx={{ width: 140 }} />
          <TextField id="stock-reason" select label="Reason" value={reason} onChange={(e) => setReason(e.target.value)} sx={{ width: 150 }}>
            {['restock', 'correction', 'damage', 'return'].map((r) => <MenuItem key={r} value={r}>{r}</MenuItem>)}
          </TextField>
          <TextField id="stock-note" label="Note" value={note} onChange={(e) => setNote(e.target.value)} />
          <Button type="submit" variant="contained" disabled={!delta || Number(delta) === 0}>Adjust stock</Button>
        </Box>
      )}
      {error && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{error}</Alert>}
      <Table size="small" aria-label="Stock ledger" sx={{ mt: 1 }}>
        <TableHead><TableRow><TableCell>When</TableCell><TableCell>Change</TableCell><TableCell>Reason</TableCell><TableCell>Stock after</TableCell><TableCell>Note</TableCell></TableRow></TableHead>
        <TableBody>
          {(ledger.data?.items ?? []).map((m) => (
            <TableRow key={m.id} data-testid="movement-row">
              <TableCell>{new Date(m.createdAt).toLocaleString()}</TableCell>
              <TableCell>{m.delta > 0 ? `+${m.delta}` : m.delta}</TableCell>
              <TableCell>{m.reason}</TableCell>
              <TableCell>{m.stockAfter}</TableCell>
              <TableCell>{m.note ?? (m.orderId ? `order ${m.orderId}` : '')}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Box>
  );
}

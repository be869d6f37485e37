import { useState } from 'react';
import { Title } from 'react-admin';
import { Box, Button, Card, CardContent, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { api, formatDateTime, OperationForm } from '../../../admin/src/pack-kit.js';

interface Recovery {
  recovered: Array<{
    customerRef: string; items: Array<{ sku: string; quantity: number }>; lastActivityAt: string;
    coupon: { code: string; percentOff: number; expiresAt: string } | null;
    recommendations: Array<{ sku: string; name: string; reason: string }>; message: string;
  }>;
  skipped: Array<{ customerRef: string; reason: string }>;
  ai?: string;
}

const SKIPPED: Record<string, string> = {
  ordered: 'ordered since', empty: 'cart emptied', bot: 'a bot', too_old: 'too old', not_old_enough: 'still shopping', already_recovered: 'already recovered',
};

/**
 * Abandoned carts (POST /crm/recover-abandoned-carts, admin): the options form is generated from the route's
 * body in the OpenAPI document; "Preview" is a dry run (nothing written, no coupon), "Recover" makes a coupon
 * per cart and emits crm.cart.abandoned for a connector to send the reminder.
 */
export default function Carts() {
  const [result, setResult] = useState<{ dryRun: boolean; data: Recovery } | null>(null);
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Abandoned carts" />
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>Abandoned carts</Typography>
        <OperationForm method="post" path="/crm/recover-abandoned-carts" leaveOut={['dryRun']} submit={async (body, action) => {
          const dryRun = action !== 'recover';
          setResult({ dryRun, data: await api<Recovery>('/crm/recover-abandoned-carts', { method: 'POST', body: { ...body, dryRun } }) });
        }}>
          <Button type="submit" name="preview" variant="outlined">Preview (dry run)</Button>
          <Button type="submit" name="recover" variant="contained">Recover carts</Button>
        </OperationForm>
        {result && (
          <Box component="section" aria-label="Carts" sx={{ mt: 2 }}>
            <Typography component="h3" variant="h6">
              {result.dryRun ? `Preview: ${result.data.recovered.length} cart(s) would be recovered (nothing written yet)` : `Recovered ${result.data.recovered.length} cart(s)`}
            </Typography>
            <Table size="small" aria-label="Abandoned carts">
              <TableHead>
                <TableRow>
                  <TableCell>Customer</TableCell><TableCell>Items</TableCell><TableCell>Last activity</TableCell>
                  <TableCell>Coupon</TableCell><TableCell>Recommended</TableCell><TableCell>Message</TableCell>
                </TableRow>
              </TableHead>
              <TableBody>
                {result.data.recovered.map((cart) => (
                  <TableRow key={cart.customerRef} data-testid="cart-row">
                    <TableCell>{cart.customerRef}</TableCell>
                    <TableCell>{cart.items.map((i) => `${i.quantity} × ${i.sku}`).join(', ')}</TableCell>
                    <TableCell>{formatDateTime(cart.lastActivityAt)}</TableCell>
                    <TableCell data-testid="cart-coupon">{cart.coupon ? `${cart.coupon.code} (−${cart.coupon.percentOff}%)` : '—'}</TableCell>
                    <TableCell>{cart.recommendations.map((r) => r.sku).join(', ')}</TableCell>
                    <TableCell>{cart.message}</TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
            {result.data.skipped.length > 0 && (
              <>
                <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>Not recovered</Typography>
                <Table size="small" aria-label="Carts not recovered">
                  <TableHead><TableRow><TableCell>Customer</TableCell><TableCell>Why</TableCell></TableRow></TableHead>
                  <TableBody>
                    {result.data.skipped.map((s) => (
                      <TableRow key={s.customerRef} data-testid="skipped-row"><TableCell>{s.customerRef}</TableCell><TableCell>{SKIPPED[s.reason] ?? s.reason}</TableCell></TableRow>
                    ))}
                  </TableBody>
                </Table>
              </>
            )}
          </Box>
        )}
      </CardContent>
    </Card>
  );
}

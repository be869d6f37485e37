import { useEffect, useState } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import { Alert, Button, List, ListItem, ListItemText, Typography } from '@mui/material';
import { api, DashboardCard, formatDateTime, isApiError, session, useSession } from '../../../admin/src/pack-kit.js';

interface Preview {
  recovered: Array<{ customerRef: string; items: Array<{ sku: string; quantity: number }>; lastActivityAt: string }>;
}

/** The carts a recovery run would pick now (its dry run: nothing written, no coupon made), for admins. */
export default function CartsWidget() {
  const key = useSession();
  const [preview, setPreview] = useState<Preview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    api<Preview>('/crm/recover-abandoned-carts', { method: 'POST', body: { dryRun: true } }).then(
      (data) => { if (live) setPreview(data); },
      (err) => { if (live) setError(isApiError(err) ? err.message : String(err)); },
    );
    return () => { live = false; };
  }, [key]);
  const carts = preview?.recovered ?? [];
  return (
    <DashboardCard title="Abandoned carts" action={session.can('admin') && <Button component={RouterLink} to="/crm/carts" size="small">Recover carts</Button>}>
      {error && <Alert severity="warning">The carts could not be previewed: {error}</Alert>}
      {preview && !carts.length && (
        <Typography>No cart to recover now. A known customer&apos;s cart left without an order shows here after an hour.</Typography>
      )}
      {!!carts.length && <Typography data-testid="carts-summary">A recovery run would pick {carts.length} cart(s) (a preview: nothing is sent yet).</Typography>}
      <List dense disablePadding>
        {carts.slice(0, 5).map((c) => (
          <ListItem key={c.customerRef} disableGutters data-testid="abandoned-cart">
            <ListItemText primary={c.items.map((i) => `${i.quantity} × ${i.sku}`).join(', ')} secondary={`${c.customerRef}, last seen ${formatDateTime(c.lastActivityAt)}`} />
          </ListItem>
        ))}
      </List>
    </DashboardCard>
  );
}

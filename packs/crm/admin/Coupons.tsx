import { useState } from 'react';
import { Title } from 'react-admin';
import { Alert, Box, Button, Card, CardContent, LinearProgress, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { cellFor, labelOf, query, useApi, useOperation } from '../../../admin/src/pack-kit.js';

const PAGE = 25;

interface Page { items: Array<Record<string, unknown>>; pagination: { hasMore: boolean } }

/**
 * Coupons made by abandoned-cart recovery (GET /crm/coupons, admin): a column per property of the route's
 * answer in the OpenAPI document, a customer filter, newest first, paged.
 */
export default function Coupons() {
  const { op, error: opError } = useOperation('get', '/crm/coupons');
  const [customer, setCustomer] = useState('');
  const [filter, setFilter] = useState('');
  const [offset, setOffset] = useState(0);
  const page = useApi<Page>(`/crm/coupons${query({ customerRef: filter, limit: PAGE, offset })}`);
  const columns = Object.entries(op?.item?.properties ?? {});
  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Coupons" />
      <CardContent>
        <Typography component="h2" variant="h6" gutterBottom>Coupons</Typography>
        <Box component="form" sx={{ display: 'flex', gap: 1, alignItems: 'center' }} onSubmit={(e) => { e.preventDefault(); setOffset(0); setFilter(customer.trim()); }}>
          <TextField id="coupon-customer" label="Customer reference" value={customer} onChange={(e) => setCustomer(e.target.value)} />
          <Button type="submit" variant="outlined">Filter</Button>
        </Box>
        {(opError || page.error) && <Alert severity="error" role="alert" sx={{ mt: 1 }}>{opError ?? page.error?.message}</Alert>}
        {!op || !page.data ? <LinearProgress aria-label="Loading coupons" sx={{ mt: 2 }} /> : (
          <>
            <Table size="small" aria-label="Coupons" sx={{ mt: 2 }}>
              <TableHead><TableRow>{columns.map(([name, s]) => <TableCell key={name}>{labelOf(name, s)}</TableCell>)}</TableRow></TableHead>
              <TableBody>
                {page.data.items.map((coupon) => (
                  <TableRow key={String(coupon.code)} data-testid="coupon-row">
                    {columns.map(([name, s]) => <TableCell key={name} className={`column-${name}`}>{cellFor(name, s)(coupon)}</TableCell>)}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
            {!page.data.items.length && <Typography sx={{ mt: 1 }}>No coupons{filter ? ` for ${filter}` : ''}.</Typography>}
            <Box sx={{ display: 'flex', gap: 1, mt: 1 }}>
              <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</Button>
              <Button disabled={!page.data.pagination.hasMore} onClick={() => setOffset(offset + PAGE)}>Next</Button>
            </Box>
          </>
        )}
      </CardContent>
    </Card>
  );
}

import { Bar, CartesianGrid, ComposedChart, Legend, Line, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { Link as RouterLink } from 'react-router-dom';
import { Alert, Box, Link, List, ListItem, ListItemText, Typography } from '@mui/material';
import { DashboardCard, formatMoney, useApi } from '../../../admin/src/pack-kit.js';

interface SalesDay { day: string; currency: string; orders: number; grossCents: number; refundedCents: number; netCents: number }
interface LowStock { id: string; number: number; sku: string; name: string; availableStock: number }

/** Below this many units a product shows as low stock (the report's default). */
const LOW = 5;

/**
 * A shop's dashboard cards: orders and net revenue per day over the last 30 days (GET /erp/reports/sales-by-day, in
 * the tenant's timezone; the currency with the most sales when there are several) and the active products running
 * out (GET /erp/reports/low-stock).
 */
export default function ShopDashboard() {
  return (
    <>
      <Sales />
      <LowStockCard />
    </>
  );
}

function Sales() {
  const { data, error } = useApi<{ items: SalesDay[] }>('/erp/reports/sales-by-day');
  const byCurrency = new Map<string, SalesDay[]>();
  for (const d of data?.items ?? []) byCurrency.set(d.currency, [...(byCurrency.get(d.currency) ?? []), d]);
  const total = (days: SalesDay[]) => days.reduce((sum, d) => sum + d.grossCents, 0);
  const [currency, days] = [...byCurrency.entries()].sort((a, b) => total(b[1]) - total(a[1]))[0] ?? ['EUR', []];
  const orders = days.reduce((sum, d) => sum + d.orders, 0);
  const net = days.reduce((sum, d) => sum + d.netCents, 0);
  const points = days.map((d) => ({ day: d.day.slice(5), orders: d.orders, net: d.netCents }));
  return (
    <DashboardCard title="Sales, last 30 days">
      {error && <Alert severity="warning">The sales report could not be read: {error.message}</Alert>}
      {data && (
        <Typography data-testid="sales-summary" gutterBottom>
          {orders.toLocaleString()} orders, {formatMoney(net, currency)} net of refunds
          {byCurrency.size > 1 ? ` (in ${currency}; also sold in ${[...byCurrency.keys()].filter((c) => c !== currency).join(', ')})` : ''}.
        </Typography>
      )}
      {data && !orders && (
        <Typography gutterBottom>
          No orders in the last 30 days. Orders come from your storefront&apos;s checkout or POST /erp/orders; add{' '}
          <Link component={RouterLink} to="/erp.product/create">products</Link> first.
        </Typography>
      )}
      {data && (
        <Box role="img" aria-label={`Orders and net revenue per day: ${orders} orders, ${formatMoney(net, currency)} net`} data-testid="sales-chart" sx={{ width: '100%', height: 260 }}>
          <ResponsiveContainer width="100%" height="100%">
            <ComposedChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 8 }} accessibilityLayer={false}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="day" tick={{ fontSize: 12 }} />
              <YAxis yAxisId="money" tickFormatter={(cents: number) => formatMoney(cents, currency)} tick={{ fontSize: 12 }} width={80} />
              <YAxis yAxisId="orders" orientation="right" allowDecimals={false} tick={{ fontSize: 12 }} width={40} />
              <Tooltip formatter={(value, name) => (name === 'Net revenue' ? formatMoney(Number(value), currency) : String(value))} />
              <Legend />
              <Bar yAxisId="orders" dataKey="orders" name="Orders" fill="#90caf9" isAnimationActive={false} />
              <Line yAxisId="money" dataKey="net" name="Net revenue" stroke="#0d47a1" strokeWidth={2} isAnimationActive={false} />
            </ComposedChart>
          </ResponsiveContainer>
        </Box>
      )}
    </DashboardCard>
  );
}

function LowStockCard() {
  const { data, error } = useApi<{ items: LowStock[] }>(`/erp/reports/low-stock?below=${LOW}&limit=10`);
  return (
    <DashboardCard title="Low stock">
      {error && <Alert severity="warning">The stock report could not be read: {error.message}</Alert>}
      {data && !data.items.length && <Typography>Every active product has {LOW} or more in stock.</Typography>}
      <List dense disablePadding>
        {(data?.items ?? []).map((p) => (
          <ListItem key={p.id} disableGutters data-testid="low-stock">
            <ListItemText
              primary={<Link component={RouterLink} to={`/erp.product/${p.id}/show`}>{p.name}</Link>}
              secondary={`${p.sku}: ${p.availableStock === 0 ? 'out of stock' : `${p.availableStock} left`}`}
            />
          </ListItem>
        ))}
      </List>
    </DashboardCard>
  );
}

import { useState } from 'react';
import { Title, useNotify } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, Checkbox, Chip, FormControlLabel, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography,
} from '@mui/material';
import { api, formatMoney, minorDigits, OperationForm, parseDecimal, useApi } from '../../../admin/src/pack-kit.js';
import { errorText } from './error-text.js';

interface Region { country: string; name: string; standardRateBasisPoints: number; reducedRateBasisPoints: number | null }
interface ShippingOption { id: string; name: string; priceCents: number; currency: string; countries: string[]; freeAboveCents: number | null; active: boolean; version: number }
interface Provider { provider: string; enabled: boolean; secretKey?: string | null; webhookSecret?: string | null; publishableKey?: string | null }

const percent = (bp: number | null) => (bp === null ? '—' : `${bp / 100}%`);

/**
 * A shop's checkout settings (admins): tax regions by destination country (PUT /erp/tax-regions/{country}),
 * shipping options (POST, and PATCH or DELETE with If-Match: a change someone else saved first is shown, not
 * overwritten) and payment providers (Stripe's keys are write-only: the form
 * never shows them, the list shows them masked). The forms are generated from the routes' bodies.
 */
export default function CheckoutSettings() {
  return (
    <Box sx={{ mt: 2, display: 'flex', flexDirection: 'column', gap: 2 }}>
      <Title title="Checkout settings" />
      <TaxRegions />
      <ShippingOptions />
      <PaymentProviders />
    </Box>
  );
}

function TaxRegions() {
  const notify = useNotify();
  const { data, reload } = useApi<{ items: Region[] }>('/erp/tax-regions');
  const [country, setCountry] = useState('');
  return (
    <Card component="section" aria-label="Tax regions">
      <CardContent>
        <Typography component="h2" variant="h6">Tax regions</Typography>
        <Typography gutterBottom>The VAT rates of each destination country; a product&apos;s tax class picks the standard, reduced or zero rate.</Typography>
        {data && !data.items.length && <Typography>No tax regions yet: carts to any country use each product&apos;s own rate. Add the countries you ship to.</Typography>}
        {!!data?.items.length && (
          <Table size="small" aria-label="Tax regions">
            <TableHead><TableRow><TableCell>Country</TableCell><TableCell>Name</TableCell><TableCell>Standard</TableCell><TableCell>Reduced</TableCell></TableRow></TableHead>
            <TableBody>
              {data.items.map((r) => (
                <TableRow key={r.country} data-testid="tax-region">
                  <TableCell>{r.country}</TableCell><TableCell>{r.name}</TableCell>
                  <TableCell>{percent(r.standardRateBasisPoints)}</TableCell><TableCell>{percent(r.reducedRateBasisPoints)}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        )}
        <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>Set a country&apos;s rates</Typography>
        <TextField id="tax-country" label="Country (ISO code, e.g. DE)" value={country} onChange={(e) => setCountry(e.target.value.toUpperCase())} required sx={{ my: 1 }} />
        <OperationForm method="put" path="/erp/tax-regions/{country}" idPrefix="tax-" submit={async (body) => {
          await api(`/erp/tax-regions/${encodeURIComponent(country)}`, { method: 'PUT', body });
          notify(`Tax region ${country} saved`, { type: 'success' });
          reload();
        }}>
          <Button type="submit" variant="contained" disabled={!/^[A-Z]{2}$/.test(country)}>Save rates</Button>
        </OperationForm>
      </CardContent>
    </Card>
  );
}

function ShippingOptions() {
  const notify = useNotify();
  const { data, reload } = useApi<{ items: ShippingOption[] }>('/erp/shipping-options?limit=100');
  const [countries, setCountries] = useState('');
  const [editing, setEditing] = useState<string | null>(null);
  return (
    <Card component="section" aria-label="Shipping options">
      <CardContent>
        <Typography component="h2" variant="h6">Shipping options</Typography>
        {data && !data.items.length && <Typography>No shipping options yet: carts check out without shipping. Add one per carrier or speed.</Typography>}
        {!!data?.items.length && (
          <Table size="small" aria-label="Shipping options">
            <TableHead>
              <TableRow>
                <TableCell>Name</TableCell><TableCell>Price</TableCell><TableCell>Free above</TableCell><TableCell>Countries</TableCell><TableCell>Status</TableCell>
                <TableCell>Actions</TableCell>
              </TableRow>
            </TableHead>
            <TableBody>
              {data.items.map((o) => (editing === o.id
                ? <ShippingOptionEditor key={o.id} option={o} done={() => { setEditing(null); reload(); }} />
                : (
                  <TableRow key={o.id} data-testid="shipping-option">
                    <TableCell>{o.name}</TableCell><TableCell>{formatMoney(o.priceCents, o.currency)}</TableCell>
                    <TableCell>{o.freeAboveCents === null ? '—' : formatMoney(o.freeAboveCents, o.currency)}</TableCell>
                    <TableCell>{o.countries.join(', ')}</TableCell><TableCell>{o.active ? 'active' : 'inactive'}</TableCell>
                    <TableCell><Button size="small" aria-label={`Edit ${o.name}`} onClick={() => setEditing(o.id)}>Edit</Button></TableCell>
                  </TableRow>
                )))}
            </TableBody>
          </Table>
        )}
        <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>New shipping option</Typography>
        <TextField id="shipping-countries" label="Countries (ISO codes, comma-separated)" value={countries} required sx={{ my: 1, width: 320 }}
          onChange={(e) => setCountries(e.target.value.toUpperCase())} />
        <OperationForm method="post" path="/erp/shipping-options" idPrefix="shipping-" leaveOut={['countries']} submit={async (body) => {
          await api('/erp/shipping-options', { method: 'POST', body: { ...body, countries: countries.split(',').map((c) => c.trim()).filter(Boolean) } });
          notify('Shipping option created', { type: 'success' });
          reload();
        }}>
          <Button type="submit" variant="contained">Create shipping option</Button>
        </OperationForm>
      </CardContent>
    </Card>
  );
}

const moneyText = (cents: number | null, currency: string) => {
  if (cents === null) return '';
  const digits = minorDigits(currency);
  return digits ? `${Math.trunc(cents / 10 ** digits)}.${String(cents % 10 ** digits).padStart(digits, '0')}` : String(cents);
};

/**
 * One option's row as a form: a merge patch of what changed, sent with If-Match of the version it was read at,
 * and its deletion (the same If-Match). A 412 version_mismatch (someone saved first) is shown in the row.
 */
function ShippingOptionEditor({ option, done }: { option: ShippingOption; done: () => void }) {
  const notify = useNotify();
  const [name, setName] = useState(option.name);
  const [price, setPrice] = useState(moneyText(option.priceCents, option.currency));
  const [freeAbove, setFreeAbove] = useState(moneyText(option.freeAboveCents, option.currency));
  const [countries, setCountries] = useState(option.countries.join(', '));
  const [active, setActive] = useState(option.active);
  const [error, setError] = useState<string | null>(null);
  const digits = minorDigits(option.currency);
  const priceCents = parseDecimal(price, digits);
  const freeAboveCents = freeAbove.trim() === '' ? null : parseDecimal(freeAbove, digits);
  const headers = { 'If-Match': `"${option.version}"` };
  const attempt = async (action: () => Promise<unknown>, message: string) => {
    setError(null);
    try {
      await action();
      notify(message, { type: 'success' });
      done();
    } catch (err) {
      setError(errorText(err));
    }
  };
  const save = () => attempt(() => api(`/erp/shipping-options/${option.id}`, {
    method: 'PATCH', headers,
    body: { name, priceCents, freeAboveCents, active, countries: countries.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean) },
  }), `Shipping option ${name} saved`);
  const remove = () => attempt(() => api(`/erp/shipping-options/${option.id}`, { method: 'DELETE', headers }), `Shipping option ${option.name} deleted`);
  return (
    <TableRow data-testid="shipping-option-editor">
      <TableCell colSpan={6}>
        <Box component="form" aria-label={`Edit ${option.name}`} sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'center' }}
          onSubmit={(e) => { e.preventDefault(); void save(); }}>
          <TextField id="edit-shipping-name" label="Name" size="small" value={name} onChange={(e) => setName(e.target.value)} required />
          <TextField id="edit-shipping-price" label={`Price (${option.currency})`} size="small" value={price} onChange={(e) => setPrice(e.target.value)}
            error={priceCents === undefined} required />
          <TextField id="edit-shipping-free-above" label={`Free above (${option.currency}, empty: never)`} size="small" value={freeAbove}
            onChange={(e) => setFreeAbove(e.target.value)} error={freeAboveCents === undefined} />
          <TextField id="edit-shipping-countries" label="Countries" size="small" value={countries} onChange={(e) => setCountries(e.target.value.toUpperCase())} />
          <FormControlLabel control={<Checkbox checked={active} onChange={(e) => setActive(e.target.checked)} />} label="Active" />
          <Button type="submit" variant="contained" disabled={priceCents === undefined || freeAboveCents === undefined}>Save option</Button>
          <Button color="error" onClick={() => void remove()}>Delete option</Button>
          <Button onClick={() => { setError(null); done(); }}>Close</Button>
          {error && (
            <Alert severity="error" role="alert" sx={{ width: '100%' }}
              action={<Button color="inherit" size="small" onClick={done}>Reload</Button>}>{error}</Alert>
          )}
        </Box>
      </TableCell>
    </TableRow>
  );
}

function PaymentProviders() {
  const notify = useNotify();
  const { data, reload } = useApi<{ items: Provider[] }>('/erp/payment-providers');
  return (
    <Card component="section" aria-label="Payment providers">
      <CardContent>
        <Typography component="h2" variant="h6">Payment providers</Typography>
        <Table size="small" aria-label="Payment providers">
          <TableHead><TableRow><TableCell>Provider</TableCell><TableCell>Status</TableCell><TableCell>Keys (masked)</TableCell></TableRow></TableHead>
          <TableBody>
            {(data?.items ?? []).map((p) => (
              <TableRow key={p.provider} data-testid="payment-provider">
                <TableCell>{p.provider}</TableCell>
                <TableCell><Chip size="small" label={p.enabled ? 'enabled' : 'off'} color={p.enabled ? 'success' : 'default'} /></TableCell>
                <TableCell sx={{ fontFamily: 'monospace' }}>{[p.secretKey, p.webhookSecret, p.publishableKey].filter(Boolean).join('  ')}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
        <Typography component="h3" variant="subtitle1" sx={{ mt: 2 }}>Connect Stripe</Typography>
        <Typography gutterBottom>The keys are stored encrypted and never shown again whole; enter them anew to change them.</Typography>
        <OperationForm method="put" path="/erp/payment-providers/stripe" idPrefix="stripe-" submit={async (body) => {
          await api('/erp/payment-providers/stripe', { method: 'PUT', body });
          notify('Stripe connected', { type: 'success' });
          reload();
        }}>
          <Button type="submit" variant="contained">Save Stripe keys</Button>
        </OperationForm>
      </CardContent>
    </Card>
  );
}

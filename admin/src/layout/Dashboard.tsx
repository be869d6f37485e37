import { Suspense, useEffect, useState, type ReactNode } from 'react';
import { Title } from 'react-admin';
import { Link as RouterLink } from 'react-router-dom';
import { Alert, Box, Button, Card, CardContent, Chip, Link, List, ListItem, ListItemText, TextField, Typography } from '@mui/material';
import { api, isApiError } from '../api/client.js';
import { resourceOf, useSchemas, type SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { packWidgets, screenOf, shown, tenantCreate, tenantList } from '../packs/pack-screens.js';
import { formatDateTime } from '../records/cells.js';
import { useSession } from './TenantPicker.js';

/**
 * The first screen after sign-in. Without a tenant: the tenants to choose from, or, for a superadmin on an empty
 * platform, the form that creates the first one. With a tenant: its record counts, its latest changes (the audit
 * log), its failing deliveries, after the packs' cards (a shop's sales and stock, the carts a recovery would pick).
 * Every empty card says what to do next.
 */
export function Dashboard() {
  useSession();
  const { schemas, loaded } = useSchemas();
  const widgets = packWidgets.filter((w) => shown(w, schemas));
  if (!session.tenant) return <TenantChooser />;
  return (
    <Box sx={{ mt: 2, display: 'flex', flexDirection: 'column', gap: 2 }}>
      <Title title="Dashboard" />
      <Welcome />
      <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', lg: 'repeat(2, minmax(0, 1fr))' } }}>
        {widgets.map((w, i) => {
          const Widget = screenOf(w.widget);
          return <Suspense key={i} fallback={null}><Widget /></Suspense>;
        })}
        <RecordCounts schemas={schemas} loaded={loaded} />
        {session.can('admin') && <RecentChanges />}
        {session.can('admin') && <FailingDeliveries />}
      </Box>
    </Box>
  );
}

/** A dashboard card: a heading, then its content. */
export function DashboardCard({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Card component="section" aria-label={title}>
      <CardContent>
        <Box sx={{ display: 'flex', alignItems: 'center', justifyContent: 'space-between', gap: 1, mb: 1 }}>
          <Typography component="h2" variant="h6">{title}</Typography>
          {action}
        </Box>
        {children}
      </CardContent>
    </Card>
  );
}

function Welcome() {
  const me = session.me;
  return (
    <Card>
      <CardContent>
        <Typography component="h1" variant="h5" gutterBottom>Welcome{me?.name ? `, ${me.name}` : ''}</Typography>
        <Typography>
          Signed in as {me?.email ?? me?.userId} ({me?.isSuperadmin ? 'platform superadmin' : me?.role}), acting on tenant{' '}
          <strong data-testid="dashboard-tenant">{session.tenant}</strong>.
        </Typography>
      </CardContent>
    </Card>
  );
}

/** How many records each schema holds (its list's total), a link to its table each. */
function RecordCounts({ schemas, loaded }: { schemas: SchemaItem[]; loaded: boolean }) {
  const [counts, setCounts] = useState<Record<string, number | null>>({});
  const shownSchemas = schemas.slice(0, 24);
  const key = shownSchemas.map(resourceOf).join(',');
  useEffect(() => {
    let live = true;
    setCounts({});
    for (const s of shownSchemas) {
      api<{ pagination: { total: number | null } }>(`/data/${s.namespace}/${s.name}?limit=1&fields=id`).then(
        (page) => { if (live) setCounts((c) => ({ ...c, [resourceOf(s)]: page.pagination.total })); },
        () => { if (live) setCounts((c) => ({ ...c, [resourceOf(s)]: null })); },
      );
    }
    return () => { live = false; };
  }, [key, session.tenant]);
  return (
    <DashboardCard title="Records">
      {loaded && !schemas.length && (
        <Typography>
          No schemas yet. A schema describes a kind of record (its fields and rules);{' '}
          {session.can('admin') ? <Link component={RouterLink} to="/schemas/create">create your first schema</Link> : 'ask an admin to create one'}
          {' '}and its table, forms and API appear at once.
        </Typography>
      )}
      <Box component="ul" sx={{ listStyle: 'none', p: 0, m: 0, display: 'grid', gap: 1, gridTemplateColumns: 'repeat(auto-fill, minmax(150px, 1fr))' }}>
        {shownSchemas.map((s) => {
          const count = counts[resourceOf(s)];
          return (
            <Box component="li" key={resourceOf(s)} data-testid="record-count" sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 1 }}>
              <Link component={RouterLink} to={`/${resourceOf(s)}`}>{s.title || s.name}</Link>
              <Typography variant="h6" component="p">{count === undefined ? '…' : count === null ? '—' : count.toLocaleString()}</Typography>
            </Box>
          );
        })}
      </Box>
      {schemas.length > shownSchemas.length && <Typography variant="body2">and {schemas.length - shownSchemas.length} more schemas in the menu.</Typography>}
    </DashboardCard>
  );
}

interface AuditEntry { id: string; at: string; actor: { type: string; id: string; email?: string }; action: string; target: string }

/** The latest entries of the tenant's audit log (admins), each record a link. */
function RecentChanges() {
  const { data, error } = useApi<{ items: AuditEntry[] }>(`/tenants/${session.tenant}/audit-log?limit=8`);
  return (
    <DashboardCard title="Recent changes" action={<Button component={RouterLink} to="/audit-log" size="small">Audit log</Button>}>
      {error && <Alert severity="warning">The audit log could not be read: {error.message}</Alert>}
      {data && !data.items.length && (
        <Typography>No changes yet. Records created or changed here or through the API are listed with who changed them and when.</Typography>
      )}
      <List dense disablePadding>
        {(data?.items ?? []).map((e) => {
          const [resource, id] = e.target.split('/');
          const to = e.action.startsWith('record.') && id && e.action !== 'record.deleted' ? `/${resource}/${id}/show` : null;
          return (
            <ListItem key={e.id} disableGutters data-testid="recent-change">
              <ListItemText
                primary={<>{e.action.replace(/^record\./, '')}{' '}{to ? <Link component={RouterLink} to={to}>{e.target}</Link> : e.target}</>}
                secondary={`${formatDateTime(e.at)} by ${e.actor.email ?? e.actor.id}`}
              />
            </ListItem>
          );
        })}
      </List>
    </DashboardCard>
  );
}

interface Connector { id: string; url: string }
interface FailedDelivery { id: string; event: string; attemptCount: number; lastStatusCode: number | null; lastError: string | null; createdAt: string }

/** Deliveries that gave up, over the tenant's connectors (admins): what failed and where to retry it. */
function FailingDeliveries() {
  const { data: connectors } = useApi<{ items: Connector[] }>('/connectors?limit=20');
  const [failed, setFailed] = useState<Array<FailedDelivery & { connector: Connector }> | null>(null);
  useEffect(() => {
    if (!connectors) return;
    let live = true;
    void Promise.all(connectors.items.map((c) => api<{ items: FailedDelivery[] }>(`/connectors/${c.id}/deliveries?status=failed&limit=5`)
      .then((page) => page.items.map((d) => ({ ...d, connector: c })), () => [])))
      .then((lists) => { if (live) setFailed(lists.flat().sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, 8)); });
    return () => { live = false; };
  }, [connectors]);
  return (
    <DashboardCard title="Failing deliveries">
      {connectors && !connectors.items.length && (
        <Typography>
          No connectors yet. <Link component={RouterLink} to="/connectors/create">Add a connector</Link> to send this tenant&apos;s events
          (a record created, an order paid) to your own systems as signed webhooks.
        </Typography>
      )}
      {!!connectors?.items.length && failed && !failed.length && <Typography>No failing deliveries: every connector&apos;s events arrived or are on their way.</Typography>}
      <List dense disablePadding>
        {(failed ?? []).map((d) => (
          <ListItem key={d.id} disableGutters data-testid="failing-delivery">
            <ListItemText
              primary={<><Chip size="small" color="error" label="failed" sx={{ mr: 1 }} /><Link component={RouterLink} to={`/connectors/${d.connector.id}/show`}>{d.event}</Link> to {d.connector.url}</>}
              secondary={`${d.attemptCount} attempts, last: ${d.lastError ?? (d.lastStatusCode ? `HTTP ${d.lastStatusCode}` : 'no answer')} (${formatDateTime(d.createdAt)})`}
            />
          </ListItem>
        ))}
      </List>
    </DashboardCard>
  );
}

/**
 * No tenant picked yet. A superadmin picks one of the platform's tenants, or, on a platform that has none, creates
 * the first; anyone else acts on the tenant of their token (a token that names none is told so).
 */
function TenantChooser() {
  const me = session.me;
  const [tenants, setTenants] = useState<Array<{ id: string; name?: string }> | null>(null);
  useEffect(() => {
    if (!me?.isSuperadmin || !tenantList) return;
    api<{ items: Array<{ id: string; name?: string }> }>(tenantList, { noTenant: true }).then((d) => setTenants(d.items), () => setTenants([]));
  }, [me?.isSuperadmin]);
  return (
    <Box sx={{ mt: 2, maxWidth: 720 }}>
      <Title title="Choose a tenant" />
      <Card>
        <CardContent>
          <Typography component="h1" variant="h5" gutterBottom>Choose a tenant</Typography>
          {!me?.isSuperadmin && <Typography>Your sign-in names no tenant. Ask an admin of your organisation for an invitation.</Typography>}
          {me?.isSuperadmin && tenants && !!tenants.length && (
            <>
              <Typography gutterBottom>Every screen acts on one tenant (a shop, a site). Pick one here or in the bar above.</Typography>
              <List aria-label="Tenants">
                {tenants.map((tenant) => (
                  <ListItem key={tenant.id} disableGutters>
                    <Button variant="outlined" onClick={() => session.setTenant(tenant.id)}>{tenant.name ? `${tenant.name} (${tenant.id})` : tenant.id}</Button>
                  </ListItem>
                ))}
              </List>
            </>
          )}
          {me?.isSuperadmin && tenants && !tenants.length && <FirstTenant />}
        </CardContent>
      </Card>
    </Box>
  );
}

/** The platform has no tenant yet: create the first (POST of the pack's tenant creation route) and act on it. */
function FirstTenant() {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  if (!tenantCreate) return <Typography>This platform has no tenant yet, and no pack here creates one.</Typography>;
  const create = async () => {
    try {
      const created = await api<{ id: string }>(tenantCreate!, { method: 'POST', body: { name }, noTenant: true });
      session.setTenant(created.id);
    } catch (err) {
      setError(isApiError(err) ? err.message : String(err));
    }
  };
  return (
    <Box component="form" aria-label="Create your first tenant" onSubmit={(e) => { e.preventDefault(); void create(); }}>
      <Typography component="h2" variant="h6" gutterBottom>Create your first tenant</Typography>
      <Typography gutterBottom>
        A tenant holds one shop or site: its schemas, records, members and settings. Name it; its id is made from the name.
      </Typography>
      <Box sx={{ display: 'flex', gap: 1, alignItems: 'center' }}>
        <TextField id="first-tenant-name" label="Tenant name" value={name} onChange={(e) => setName(e.target.value)} required />
        <Button type="submit" variant="contained" disabled={!name.trim()}>Create tenant</Button>
      </Box>
      {error && <Alert severity="error" sx={{ mt: 1 }}>{error}</Alert>}
    </Box>
  );
}

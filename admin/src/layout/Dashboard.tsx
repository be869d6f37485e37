import { Suspense } from 'react';
import { Title } from 'react-admin';
import { Card, CardContent, Link, List, ListItem, Typography } from '@mui/material';
import { resourceOf, useSchemas } from '../api/schemas.js';
import { session } from '../api/session.js';
import { packWidgets, screenOf, shown } from '../packs/pack-screens.js';
import { useSession } from './TenantPicker.js';

/** The console's welcome card, then the packs' widgets (for their role, when the tenant lists the schema they need). */
export function Dashboard() {
  useSession();
  const { schemas } = useSchemas();
  const me = session.me;
  const widgets = packWidgets.filter((w) => shown(w, schemas));
  return (
    <>
      <Card sx={{ mt: 2 }}>
        <Title title="Admin console" />
        <CardContent>
          <Typography component="h2" variant="h5" gutterBottom>Welcome{me?.name ? `, ${me.name}` : ''}</Typography>
          <Typography>
            Signed in as {me?.email ?? me?.userId} ({me?.isSuperadmin ? 'platform superadmin' : me?.role}), acting on tenant{' '}
            <strong data-testid="dashboard-tenant">{session.tenant ?? '(none picked)'}</strong>.
          </Typography>
          <Typography component="h3" variant="h6" sx={{ mt: 2 }}>Schemas ({schemas.length})</Typography>
          <List dense>
            {schemas.map((s) => (
              <ListItem key={resourceOf(s)}><Link href={`/admin/${resourceOf(s)}`}>{s.namespace}.{s.name}</Link>{s.title ? ` — ${s.title}` : ''}</ListItem>
            ))}
          </List>
        </CardContent>
      </Card>
      {widgets.map((w, i) => {
        const Widget = screenOf(w.widget);
        return <Suspense key={i} fallback={null}><Widget /></Suspense>;
      })}
    </>
  );
}

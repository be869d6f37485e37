import type { ReactNode } from 'react';
import { AppBar, Layout as RaLayout, Menu, TitlePortal, type LayoutProps } from 'react-admin';
import { Box, ListSubheader, Typography } from '@mui/material';
import { resourceOf, useSchemas } from '../api/schemas.js';
import { session } from '../api/session.js';
import { TenantPicker, useSession } from './TenantPicker.js';

function ConsoleAppBar() {
  return (
    <AppBar toolbar={<Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}><TenantPicker /></Box>}>
      <TitlePortal />
    </AppBar>
  );
}

function Section({ children }: { children: ReactNode }) {
  return <ListSubheader component="div" sx={{ bgcolor: 'transparent', lineHeight: '32px' }}>{children}</ListSubheader>;
}

/** The menu, generated from the tenant's schemas (grouped by namespace) plus the hand-made screens. */
function ConsoleMenu() {
  useSession();
  const { schemas } = useSchemas();
  const namespaces = [...new Set(schemas.map((s) => s.namespace))].sort();
  const me = session.me;
  return (
    <Menu>
      <Menu.DashboardItem />
      <Section>Build</Section>
      <Menu.Item to="/schemas" primaryText="Schemas" />
      {namespaces.map((ns) => (
        <Box key={ns} component="nav" aria-label={`Records of ${ns}`}>
          <Section>{ns}</Section>
          {schemas.filter((s) => s.namespace === ns).map((s) => (
            <Menu.Item key={resourceOf(s)} to={`/${resourceOf(s)}`} primaryText={s.title || s.name} />
          ))}
        </Box>
      ))}
      <Section>Content</Section>
      <Menu.Item to="/content/import" primaryText="Site import" />
      <Section>Administration</Section>
      <Menu.Item to="/tenant" primaryText="Tenant settings" />
      <Menu.Item to="/connectors" primaryText="Connectors" />
      {me?.isSuperadmin && <Menu.Item to="/platform" primaryText="Platform settings" />}
    </Menu>
  );
}

export function Layout({ children }: LayoutProps) {
  useSession();
  return (
    <RaLayout appBar={ConsoleAppBar} menu={ConsoleMenu}>
      {!session.tenant && (
        <Typography role="status" sx={{ p: 2 }}>Pick a tenant in the bar above: every screen acts on one tenant.</Typography>
      )}
      {children}
    </RaLayout>
  );
}

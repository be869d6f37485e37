import { memo, type ReactNode } from 'react';
import { AppBar, Layout as RaLayout, TitlePortal, useSidebarState, type LayoutProps } from 'react-admin';
import { Link, useLocation } from 'react-router-dom';
import { Box, List, ListItem, ListItemButton, ListItemText, Typography } from '@mui/material';
import { resourceOf, useSchemas } from '../api/schemas.js';
import { session } from '../api/session.js';
import { packMenu, shown } from '../packs/pack-screens.js';
import { TenantPicker, useSession } from './TenantPicker.js';

// Memoised: a page turn changes the location, and nothing in the bar depends on it. Always shown: hiding it
// on scroll slid it (forcing a layout) on every page turn.
const ConsoleAppBar = memo(function ConsoleAppBar() {
  return (
    <AppBar alwaysOn toolbar={<Box sx={{ display: 'flex', alignItems: 'center', gap: 1 }}><TenantPicker /></Box>}>
      <TitlePortal />
    </AppBar>
  );
});

/** A link of the side menu, marked as the current page when it is (memoised: a page turn re-renders none). */
const Item = memo(function Item({ to, label, path }: { to: string; label: string; path: string }) {
  const current = isAt(path, to);
  return (
    <ListItem disablePadding>
      <ListItemButton component={Link} to={to} selected={current} aria-current={current ? 'page' : undefined} sx={{ py: 0.25 }}>
        <ListItemText primary={label} />
      </ListItemButton>
    </ListItem>
  );
}, (a, b) => a.to === b.to && a.label === b.label && isAt(a.path, a.to) === isAt(b.path, b.to));
const isAt = (path: string, to: string) => (to === '/' ? path === '/' : path === to || path.startsWith(`${to}/`));

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Box component="section" aria-label={title}>
      <Typography component="h2" sx={{ px: 2, pt: 1, fontSize: 12, fontWeight: 600, color: 'text.secondary', textTransform: 'uppercase' }}>{title}</Typography>
      <List dense disablePadding>{children}</List>
    </Box>
  );
}

/** The console's own last section; packs may add to it (tenant settings). */
const ADMINISTRATION = 'Administration';

/**
 * The side menu, generated from the tenant's schemas (one section per namespace), the packs' screens (their
 * sections, in pack order) and the console's own. Plain links in lists (not an ARIA menu): it is navigation.
 */
function ConsoleMenu() {
  useSession();
  const [open] = useSidebarState();
  const { schemas } = useSchemas();
  const namespaces = [...new Set(schemas.map((s) => s.namespace))].sort();
  const path = useLocation().pathname;
  const entries = packMenu.filter((entry) => shown(entry, schemas));
  const sections = [...new Set(entries.map((entry) => entry.section))].filter((section) => section !== ADMINISTRATION);
  const item = (entry: { to: string; label: string }) => <Item key={entry.to} path={path} to={entry.to} label={entry.label} />;
  if (!open) return null;
  return (
    <Box component="nav" aria-label="Console" sx={{ width: 220, pb: 4 }}>
      <List dense><Item path={path} to="/" label="Dashboard" /></List>
      <Section title="Build"><Item path={path} to="/schemas" label="Schemas" /></Section>
      {namespaces.map((ns) => (
        <Section key={ns} title={`Records: ${ns}`}>
          {schemas.filter((s) => s.namespace === ns).map((s) => <Item key={resourceOf(s)} path={path} to={`/${resourceOf(s)}`} label={s.title || s.name} />)}
        </Section>
      ))}
      {sections.map((section) => (
        <Section key={section} title={section}>
          {entries.filter((entry) => entry.section === section).map(item)}
        </Section>
      ))}
      <Section title={ADMINISTRATION}>
        {entries.filter((entry) => entry.section === ADMINISTRATION).map(item)}
        <Item path={path} to="/releases" label="Releases" />
        <Item path={path} to="/connectors" label="Connectors" />
        {session.can('admin') && <Item path={path} to="/roles" label="Roles" />}
        {session.can('admin') && <Item path={path} to="/api-tokens" label="API tokens" />}
        {session.can('admin') && <Item path={path} to="/audit-log" label="Audit log" />}
      </Section>
    </Box>
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

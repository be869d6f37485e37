import { lazy } from 'react';
import { AdminContext, AdminUI, CustomRoutes, Resource, defaultTheme, memoryStore, type RaThemeOptions } from 'react-admin';
import polyglotI18nProvider from 'ra-i18n-polyglot';
import englishMessages from 'ra-language-english';
import { BrowserRouter, Route } from 'react-router-dom';
import { dataProvider } from './api/data-provider.js';
import { resourceOf, useSchemas } from './api/schemas.js';
import { session } from './api/session.js';
import { authProvider } from './auth/auth-provider.js';
import { LoginPage } from './auth/LoginPage.js';
import { Dashboard } from './layout/Dashboard.js';
import { Layout } from './layout/Layout.js';
import { useSession } from './layout/TenantPicker.js';
import { packRoutes, screenOf } from './packs/pack-screens.js';
import { displayField, RecordList } from './records/Records.js';
import { SchemaList } from './schemas/Schemas.js';

// Screens that not every visit needs are loaded on demand (smaller first load): the first screen of a
// signed-in visit is a table, so forms, record pages and the hand-made screens come later.
const forms = () => import('./records/RecordForms.js');
const RecordCreate = lazy(() => forms().then((m) => ({ default: m.RecordCreate })));
const RecordEdit = lazy(() => forms().then((m) => ({ default: m.RecordEdit })));
const RecordShow = lazy(() => forms().then((m) => ({ default: m.RecordShow })));
const SchemaShow = lazy(() => import('./schemas/SchemaShow.js').then((m) => ({ default: m.SchemaShow })));
const SchemaCreate = lazy(() => import('./schemas/SchemaCreate.js').then((m) => ({ default: m.SchemaCreate })));
const SchemaEdit = lazy(() => import('./schemas/SchemaCreate.js').then((m) => ({ default: m.SchemaEdit })));
const Connectors = lazy(() => import('./events/Connectors.js'));
const ConnectorCreate = lazy(() => import('./events/Connectors.js').then((m) => ({ default: m.ConnectorCreate })));
const ReleaseList = lazy(() => import('./workflow/Releases.js').then((m) => ({ default: m.ReleaseList })));
const ReleasePage = lazy(() => import('./workflow/Releases.js').then((m) => ({ default: m.ReleasePage })));
const ConnectorShow = lazy(() => import('./events/Connectors.js').then((m) => ({ default: m.ConnectorShow })));
const AuditLog = lazy(() => import('./access/AuditLog.js'));
const ApiTokens = lazy(() => import('./access/ApiTokens.js'));
const RoleList = lazy(() => import('./access/Roles.js').then((m) => ({ default: m.RoleList })));
const RoleEditor = lazy(() => import('./access/Roles.js').then((m) => ({ default: m.RoleEditor })));

/** react-admin's theme with colours and outlined inputs that meet WCAG AA contrast. */
const theme: RaThemeOptions = {
  ...defaultTheme,
  palette: { primary: { main: '#1565c0' }, secondary: { main: '#0d3c78' }, error: { main: '#b71c1c' }, text: { secondary: 'rgba(0, 0, 0, 0.7)' } },
  components: {
    ...defaultTheme.components,
    MuiTextField: { defaultProps: { variant: 'outlined', margin: 'dense', size: 'small' } },
    MuiFormControl: { defaultProps: { variant: 'outlined', margin: 'dense', size: 'small' } },
  },
};

const i18nProvider = polyglotI18nProvider(() => englishMessages, 'en', { allowMissing: true });

/**
 * Resources come from the tenant's schemas (a sealed schema, written only by its pack, has no create or edit form);
 * the rest are screens a schema cannot describe: the console's own, and those the packs declare (packs/pack-screens.ts).
 */
function ConsoleUI() {
  useSession();
  const { schemas } = useSchemas();
  const editor = session.can('editor');
  const admin = session.can('admin');
  return (
    <AdminUI layout={Layout} loginPage={LoginPage} dashboard={Dashboard} title="Admin console" requireAuth disableTelemetry>
      <Resource name="schemas" list={SchemaList} show={SchemaShow} create={admin ? SchemaCreate : undefined} edit={admin ? SchemaEdit : undefined} options={{ label: 'Schemas' }} />
      <Resource name="connectors" list={Connectors} create={admin ? ConnectorCreate : undefined} show={ConnectorShow} options={{ label: 'Connectors' }} />
      {schemas.map((s) => (
        <Resource
          key={resourceOf(s)} name={resourceOf(s)} options={{ label: s.title || s.name }} recordRepresentation={displayField(s)}
          list={RecordList} show={RecordShow}
          edit={editor && !s.sealed ? RecordEdit : undefined} create={editor && !s.sealed ? RecordCreate : undefined}
        />
      ))}
      <CustomRoutes>
        {admin && <Route path="/audit-log" element={<AuditLog />} />}
        {admin && <Route path="/api-tokens" element={<ApiTokens />} />}
        {admin && <Route path="/roles" element={<RoleList />} />}
        {admin && <Route path="/roles/new" element={<RoleEditor />} />}
        {admin && <Route path="/roles/:name/edit" element={<RoleEditor />} />}
        <Route path="/releases" element={<ReleaseList />} />
        <Route path="/releases/:id" element={<ReleasePage />} />
        {packRoutes.map((route) => {
          const Screen = screenOf(route.screen);
          return <Route key={route.path} path={route.path} element={<Screen />} />;
        })}
      </CustomRoutes>
    </AdminUI>
  );
}

export function App() {
  return (
    <BrowserRouter basename="/admin">
      <AdminContext dataProvider={dataProvider} authProvider={authProvider} i18nProvider={i18nProvider} store={memoryStore()} theme={theme}>
        <ConsoleUI />
      </AdminContext>
    </BrowserRouter>
  );
}

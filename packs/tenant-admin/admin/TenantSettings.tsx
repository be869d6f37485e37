import { useEffect, useState, type ReactNode } from 'react';
import { Title, useNotify } from 'react-admin';
import {
  Alert, Box, Button, Card, CardContent, FormControlLabel, MenuItem, Switch, Tab, Table, TableBody, TableCell, TableHead,
  TableRow, Tabs, TextField, Typography,
} from '@mui/material';
import { type ApiError, api, isApiError, session, useApi, useSession } from '../../../admin/src/pack-kit.js';

/** The tenant acted on, for paths like /tenants/{id}/branding. */
const tenantPath = (suffix: string) => (session.tenant ? `/tenants/${encodeURIComponent(session.tenant)}${suffix}` : null);

/** Tenant administration: site config and navigation, branding, domains, modules, features, members. */
export default function TenantSettings() {
  useSession();
  const [tab, setTab] = useState(0);
  const tabs: Array<[string, ReactNode]> = [
    ['Site', <SiteConfig key="site" />],
    ['Branding', <Branding key="branding" />],
    ['Domains', <Domains key="domains" />],
    ['Modules', <Modules key="modules" />],
    ...(session.me?.isSuperadmin ? [['Features', <Features key="features" />] as [string, ReactNode]] : []),
    ['Members', <Members key="members" />],
  ];
  if (!session.tenant) return <Typography sx={{ p: 2 }}>Pick a tenant first.</Typography>;
  return (
    <Card sx={{ mt: 2 }}>
      <Title title={`Tenant settings: ${session.tenant}`} />
      <Tabs value={tab} onChange={(_, v) => setTab(v)} aria-label="Tenant settings" variant="scrollable">
        {tabs.map(([label]) => <Tab key={label} label={label} />)}
      </Tabs>
      <CardContent>{tabs[tab][1]}</CardContent>
    </Card>
  );
}

function useSaver() {
  const notify = useNotify();
  const [error, setError] = useState<ApiError | null>(null);
  const run = async (what: string, action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      notify(`${what} saved`, { type: 'success' });
      return true;
    } catch (err) {
      if (isApiError(err)) setError(err);
      else throw err;
      return false;
    }
  };
  const at = (path: string) => error?.issues.find((i) => i.path === path || i.path.startsWith(`${path}/`))?.message;
  const banner = error && <Alert severity="error" role="alert" sx={{ my: 2 }}>{explain(error)}</Alert>;
  return { run, at, banner, error };
}

/** The contract's codes, said for people. */
function explain(error: ApiError): string {
  if (error.status === 402) return 'This needs the custom-domain feature: a domain outside the platform\'s base domain is a paid feature (402). A platform superadmin can turn it on under Features.';
  if (error.status === 403) return `Not allowed: ${error.message}`;
  const details = error.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return details ? `${error.message} (${details})` : error.message;
}

interface NavItem { label: string; href: string }

function SiteConfig() {
  const { data } = useApi<Record<string, any>>(tenantPath('/site-config'));
  const [form, setForm] = useState<Record<string, any>>({});
  const [nav, setNav] = useState<NavItem[]>([]);
  const saver = useSaver();
  useEffect(() => {
    if (data) {
      setForm({ siteName: data.siteName ?? '', defaultLocale: data.defaultLocale ?? '', timezone: data.timezone ?? '', seoTitle: data.seo?.title ?? '', seoDescription: data.seo?.description ?? '' });
      setNav((data.navigation ?? []).map((n: NavItem) => ({ label: n.label, href: n.href })));
    }
  }, [data]);
  const field = (key: string, label: string, path: string) => (
    <TextField id={`site-${key}`} label={label} value={form[key] ?? ''} onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      error={!!saver.at(path)} helperText={saver.at(path)} sx={{ minWidth: 260 }} />
  );
  const save = () => saver.run('Site config', () => api(tenantPath('/site-config')!, {
    method: 'PATCH',
    body: {
      siteName: form.siteName || null, defaultLocale: form.defaultLocale || null, timezone: form.timezone || null,
      seo: { title: form.seoTitle || null, description: form.seoDescription || null },
      navigation: nav.filter((n) => n.label && n.href),
    },
  }));
  if (!data) return <Typography>Loading…</Typography>;
  return (
    <Box component="form" onSubmit={(e) => { e.preventDefault(); void save(); }} sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
      <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap' }}>
        {field('siteName', 'Site name', '/siteName')}
        {field('defaultLocale', 'Default locale', '/defaultLocale')}
        {field('timezone', 'Time zone', '/timezone')}
        {field('seoTitle', 'SEO title', '/seo/title')}
        {field('seoDescription', 'SEO description', '/seo/description')}
      </Box>
      <Typography component="h3" variant="subtitle1">Navigation</Typography>
      {nav.map((item, i) => (
        <Box key={i} sx={{ display: 'flex', gap: 1 }}>
          <TextField size="small" id={`nav-${i}-label`} label="Label" value={item.label} onChange={(e) => setNav(nav.map((n, j) => (j === i ? { ...n, label: e.target.value } : n)))} />
          <TextField size="small" id={`nav-${i}-href`} label="Link" value={item.href} onChange={(e) => setNav(nav.map((n, j) => (j === i ? { ...n, href: e.target.value } : n)))}
            error={!!saver.at(`/navigation/${i}`)} helperText={saver.at(`/navigation/${i}`)} />
          <Button onClick={() => setNav(nav.filter((_, j) => j !== i))}>Remove</Button>
        </Box>
      ))}
      <Box><Button onClick={() => setNav([...nav, { label: '', href: '/' }])}>Add menu entry</Button></Box>
      {saver.banner}
      <Box><Button type="submit" variant="contained">Save site config</Button></Box>
    </Box>
  );
}

/** Black or white, whichever reads better on `hex` (WCAG relative luminance). */
function readableOn(hex: string | undefined): string {
  const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex ?? '');
  if (!m) return '#000';
  const [r, g, b] = m.slice(1).map((h) => {
    const c = parseInt(h, 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? '#000' : '#fff';
}

const COLORS = ['primary', 'secondary', 'accent', 'background', 'text'] as const;

function Branding() {
  const { data } = useApi<Record<string, any>>(tenantPath('/branding'));
  const [colors, setColors] = useState<Record<string, string>>({});
  const [logoUrl, setLogoUrl] = useState('');
  const [uploading, setUploading] = useState(false);
  const saver = useSaver();
  useEffect(() => {
    if (data) {
      setColors({ primary: '#1565c0', secondary: '#6a1b9a', accent: '#ef6c00', background: '#ffffff', text: '#212121', ...(data.colors ?? {}) });
      setLogoUrl(data.logoUrl ?? '');
    }
  }, [data]);

  /** The logo goes through the storage mediator as a public object; the branding points at its public asset URL. */
  const upload = async (file: File) => {
    setUploading(true);
    try {
      const filename = `${Date.now()}-${file.name.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 120);
      const stored = await api<{ key: string }>('/storage/objects', {
        method: 'POST', raw: file,
        headers: { 'Content-Type': file.type || 'application/octet-stream', 'X-Platform-Product': 'branding', 'X-Platform-Collection': 'logo', 'X-Platform-Filename': filename, 'X-Platform-Visibility': 'public' },
      });
      const prefix = `tenants/${session.tenant}/`;
      setLogoUrl(`/api/v1/public/assets/${session.tenant}/${stored.key.slice(prefix.length)}`);
    } catch (err) {
      if (isApiError(err)) saver.run('Logo', () => Promise.reject(err));
    } finally {
      setUploading(false);
    }
  };
  const save = () => saver.run('Branding', () => api(tenantPath('/branding')!, { method: 'PATCH', body: { colors, ...(logoUrl ? { logoUrl } : {}) } }));
  if (!data) return <Typography>Loading…</Typography>;
  return (
    <Box sx={{ display: 'grid', gridTemplateColumns: { md: '1fr 1fr' }, gap: 3 }}>
      <Box component="form" onSubmit={(e) => { e.preventDefault(); void save(); }} sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
        {COLORS.map((c) => (
          <Box key={c} sx={{ display: 'flex', alignItems: 'center', gap: 1 }}>
            <label htmlFor={`color-${c}`} style={{ width: 110 }}>{c[0].toUpperCase() + c.slice(1)} colour</label>
            <input id={`color-${c}`} type="color" value={colors[c] ?? '#000000'} onChange={(e) => setColors({ ...colors, [c]: e.target.value })} />
            <code>{colors[c]}</code>
          </Box>
        ))}
        {saver.at('/colors') && <Typography color="error">{saver.at('/colors')}</Typography>}
        <Box>
          <label htmlFor="logo-file">Logo (PNG, SVG or JPEG): </label>
          <input id="logo-file" type="file" accept="image/*" onChange={(e) => e.target.files?.[0] && void upload(e.target.files[0])} />
          {uploading && <span role="status"> uploading…</span>}
        </Box>
        {saver.banner}
        <Box><Button type="submit" variant="contained" disabled={uploading}>Save branding</Button></Box>
      </Box>
      <Box component="section" aria-label="Preview" data-testid="branding-preview"
        sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2, bgcolor: colors.background, color: colors.text }}>
        <Box sx={{ display: 'flex', alignItems: 'center', gap: 2, bgcolor: colors.primary, p: 1, borderRadius: 1 }}>
          {logoUrl ? <img src={logoUrl} alt="Logo preview" style={{ maxHeight: 48 }} /> : <span style={{ color: readableOn(colors.primary) }}>(no logo)</span>}
          <strong style={{ color: readableOn(colors.primary) }}>{session.tenant}</strong>
        </Box>
        <p>Body text in the text colour.</p>
        <span style={{ background: colors.accent, color: readableOn(colors.accent), padding: '4px 8px', borderRadius: 4 }}>Accent button</span>{' '}
        <span style={{ background: colors.secondary, color: readableOn(colors.secondary), padding: '4px 8px', borderRadius: 4 }}>Secondary</span>
      </Box>
    </Box>
  );
}

function Domains() {
  const { data } = useApi<{ domains: Array<string | { domain: string }> }>(tenantPath('/domains'));
  const [text, setText] = useState('');
  const saver = useSaver();
  useEffect(() => {
    if (data) setText(data.domains.map((d) => (typeof d === 'string' ? d : d.domain)).join('\n'));
  }, [data]);
  const save = () => saver.run('Domains', () => api(tenantPath('/domains')!, { method: 'PUT', body: { domains: text.split(/\s+/).filter(Boolean) } }));
  // The field shows once the saved domains are in it: typed earlier, the answer would replace what was typed.
  if (!data) return <Typography>Loading…</Typography>;
  return (
    <Box component="form" onSubmit={(e) => { e.preventDefault(); void save(); }} sx={{ display: 'flex', flexDirection: 'column', gap: 2, maxWidth: 520 }}>
      <TextField id="domains" label="Domains, one a line" multiline minRows={4} value={text} onChange={(e) => setText(e.target.value)}
        helperText="Domains outside the platform's base domain need the custom-domain feature." />
      {saver.banner}
      <Box><Button type="submit" variant="contained">Save domains</Button></Box>
    </Box>
  );
}

function Modules() {
  const { data, reload } = useApi<Array<{ appCode: string; isEnabled: boolean }>>(tenantPath('/licensed-modules'));
  const saver = useSaver();
  return (
    <Box>
      {(data ?? []).map((m) => (
        <FormControlLabel key={m.appCode} label={`${m.appCode.toUpperCase()} module`} disabled={!session.can('admin')}
          control={<Switch checked={m.isEnabled} onChange={async (e) => {
            await saver.run(`Module ${m.appCode}`, () => api(tenantPath('/licensed-modules')!, { method: 'PATCH', body: { appCode: m.appCode, isEnabled: e.target.checked } }));
            reload();
          }} />} />
      ))}
      {saver.banner}
    </Box>
  );
}

function Features() {
  const { data, reload } = useApi<Record<string, boolean>>(tenantPath('/features'));
  const saver = useSaver();
  return (
    <Box>
      {Object.entries(data ?? {}).map(([flag, on]) => (
        <FormControlLabel key={flag} label={flag.replace(/_/g, ' ')}
          control={<Switch checked={on} onChange={async (e) => {
            await saver.run(`Feature ${flag}`, () => api(tenantPath('/features')!, { method: 'PATCH', body: { [flag]: e.target.checked } }));
            reload();
          }} />} />
      ))}
      {saver.banner}
    </Box>
  );
}

interface Member { id: string; email: string; name: string | null; role: string; status: string; source: string }
interface Invitation { id: string; email: string; role: string; status: string; expiresAt: string }

function Members() {
  const members = useApi<Member[]>(tenantPath('/members'));
  const invitations = useApi<Invitation[]>(session.can('admin') ? tenantPath('/invitations') : null);
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('editor');
  const saver = useSaver();
  const invite = async () => {
    if (await saver.run(`Invitation to ${email}`, () => api(tenantPath('/invitations')!, { method: 'POST', body: { email, role } }))) {
      setEmail('');
      invitations.reload();
    }
  };
  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', gap: 2 }}>
      <Table size="small" aria-label="Members">
        <TableHead><TableRow><TableCell>Email</TableCell><TableCell>Name</TableCell><TableCell>Role</TableCell><TableCell>Status</TableCell></TableRow></TableHead>
        <TableBody>
          {(members.data ?? []).map((m) => (
            <TableRow key={m.id}><TableCell>{m.email}</TableCell><TableCell>{m.name}</TableCell><TableCell>{m.role}</TableCell><TableCell>{m.status}</TableCell></TableRow>
          ))}
        </TableBody>
      </Table>
      {session.can('admin') && (
        <>
          <Typography component="h3" variant="subtitle1">Invite a member</Typography>
          <Box component="form" onSubmit={(e) => { e.preventDefault(); void invite(); }} sx={{ display: 'flex', gap: 1, flexWrap: 'wrap', alignItems: 'flex-start' }}>
            <TextField id="invite-email" label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} error={!!saver.at('/email')} helperText={saver.at('/email')} />
            <TextField id="invite-role" select label="Role" value={role} onChange={(e) => setRole(e.target.value)} sx={{ width: 140 }}>
              {['admin', 'editor', 'viewer'].map((r) => <MenuItem key={r} value={r}>{r}</MenuItem>)}
            </TextField>
            <Button type="submit" variant="contained" sx={{ mt: 1 }}>Send invitation</Button>
          </Box>
          {saver.banner}
          <Table size="small" aria-label="Invitations">
            <TableHead><TableRow><TableCell>Invited</TableCell><TableCell>Role</TableCell><TableCell>Status</TableCell><TableCell>Expires</TableCell></TableRow></TableHead>
            <TableBody>
              {(invitations.data ?? []).map((i) => (
                <TableRow key={i.id}>
                  <TableCell>{i.email}</TableCell><TableCell>{i.role}</TableCell><TableCell>{i.status}</TableCell><TableCell>{new Date(i.expiresAt).toLocaleDateString()}</TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </>
      )}
    </Box>
  );
}

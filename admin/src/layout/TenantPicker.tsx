import { memo, useEffect, useState, useSyncExternalStore } from 'react';
import { Autocomplete, Chip, TextField } from '@mui/material';
import { api } from '../api/client.js';
import { session } from '../api/session.js';
import { tenantList } from '../packs/pack-screens.js';

export const useSession = () => useSyncExternalStore(session.subscribe, () => `${session.token}|${session.tenant}`);

/**
 * Which tenant every screen acts on (X-Tenant-Id). A superadmin picks any tenant (typed, or from the list a pack
 * offers: `tenantList`); anyone else acts on the tenant of their token and sees it as a chip.
 */
export const TenantPicker = memo(function TenantPicker() {
  useSession();
  const me = session.me;
  const tenant = session.tenant;
  const [tenants, setTenants] = useState<string[]>([]);
  useEffect(() => {
    if (me?.isSuperadmin && tenantList) {
      api<{ items: Array<{ id: string }> } | Array<{ id: string }>>(tenantList, { noTenant: true })
        .then((data) => setTenants((Array.isArray(data) ? data : data.items).map((t) => t.id)), () => setTenants([]));
    }
  }, [me?.isSuperadmin]);

  if (!me?.isSuperadmin) {
    return <Chip color="secondary" label={`Tenant: ${tenant ?? 'none'}`} data-testid="current-tenant" />;
  }
  return (
    <Autocomplete
      id="tenant-picker" size="small" sx={{ width: 240, bgcolor: 'background.paper', borderRadius: 1 }} freeSolo
      options={tenants} value={tenant ?? ''}
      onChange={(_, value) => session.setTenant(value || null)}
      renderInput={(params) => <TextField {...params} label="Tenant" />}
    />
  );
});

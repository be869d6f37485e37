import { useCallback, useEffect, useState } from 'react';
import { type ApiError, api, isApiError } from '../api/client.js';
import { useSession } from '../layout/TenantPicker.js';

/** Loads `path` (again when the tenant changes); `reload` fetches it anew. */
export function useApi<T>(path: string | null): { data: T | null; error: ApiError | null; reload: () => void; setData: (d: T) => void } {
  const key = useSession();
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!path) return;
    let live = true;
    api<T>(path).then((d) => { if (live) { setData(d); setError(null); } }, (e) => { if (live) setError(isApiError(e) ? e : null); });
    return () => { live = false; };
  }, [path, key, tick]);
  return { data, error, reload: useCallback(() => setTick((t) => t + 1), []), setData };
}

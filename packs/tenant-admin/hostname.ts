const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** Lower-cases a host and drops a port and a trailing dot: `WWW.Acme.com:8080` → `www.acme.com`. */
export function normalizeHost(host: string): string {
  return host.trim().toLowerCase().replace(/:\d{1,5}$/, '').replace(/\.$/, '');
}

/** A DNS hostname with at least two labels, letters/digits/hyphens, a non-numeric top-level label. */
export function isValidHostname(host: string): boolean {
  if (host.length === 0 || host.length > 253) return false;
  const labels = host.split('.');
  if (labels.length < 2) return false;
  if (!labels.every((l) => LABEL.test(l))) return false;
  return /[a-z]/.test(labels[labels.length - 1]);
}

/** Whether a host is the platform base domain or below it. */
export function isUnderDomain(host: string, base: string): boolean {
  return host === base || host.endsWith(`.${base}`);
}

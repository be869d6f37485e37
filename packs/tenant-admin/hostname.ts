const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A domain of a tenant in a request body (the document's and ajv's rule): labels of letters, digits and inner hyphens, at
 * least two, the last starting with a letter, any case, maybe a trailing dot. Every such name passes isValidHostname
 * once lower-cased, so the document promises nothing the service then refuses.
 */
export const DOMAIN_NAME = {
  type: 'string', minLength: 1, maxLength: 253,
  pattern: '^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$',
} as const;

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

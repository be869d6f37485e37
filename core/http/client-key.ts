import ipaddr from 'ipaddr.js';

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const CANONICAL_IPV4 = new RegExp(`^(?:::ffff:)?(${OCTET}(?:\\.${OCTET}){3})$`, 'i');

/**
 * The key that counts one client in a per-client rate limit: an IPv4 address as is (also when IPv4-mapped),
 * an IPv6 address by its /64 prefix (one subscriber usually holds a whole /64 and can rotate within it).
 */
export function clientKey(ip: string): string {
  let key = recentKeys.get(ip);
  if (key === undefined) {
    if (recentKeys.size >= RECENT_KEYS) recentKeys.clear();
    recentKeys.set(ip, (key = keyOf(ip)));
  }
  return key;
}

/** The keys of the addresses seen last (a client sends many requests): the same string, not parsed again. */
const recentKeys = new Map<string, string>();
const RECENT_KEYS = 4096;

function keyOf(ip: string): string {
  // The usual case, a socket's dotted IPv4 address (also IPv4-mapped), without parsing it.
  const v4 = CANONICAL_IPV4.exec(ip);
  if (v4) return v4[1]!;
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

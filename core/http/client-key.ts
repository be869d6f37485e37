import ipaddr from 'ipaddr.js';

/**
 * The key that counts one client in a per-client rate limit: an IPv4 address as is (also when IPv4-mapped),
 * an IPv6 address by its /64 prefix (one subscriber usually holds a whole /64 and can rotate within it).
 */
export function clientKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

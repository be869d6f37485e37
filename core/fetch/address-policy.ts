import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Host names of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Metadata addresses, named for the error message (their ranges are refused anyway). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/**
 * Why an IP address may not be fetched, or null when it may. Only globally routable unicast addresses pass:
 * ipaddr.js names every special range (loopback, private, linkLocal, carrierGradeNat, multicast, unspecified,
 * broadcast, uniqueLocal, reserved, ...). An IPv6 address that embeds an IPv4 address (IPv4-compatible,
 * IPv4-mapped, NAT64, 6to4, Teredo) is judged by the IPv4 address it embeds.
 */
export function refusedAddressReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return 'is not an IP address';
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv6') {
    const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
    if (embedded.length) {
      for (const v4 of embedded) {
        const reason = refusedAddressReason(v4.toString());
        if (reason) return `embeds ${v4.toString()}, which ${reason}`;
      }
      return null;
    }
  }
  const normal = parsed.toString();
  if (METADATA_ADDRESSES.has(normal)) return 'is a cloud metadata address';
  const range = parsed.range();
  return range === 'unicast' ? null : `is in a ${range} range`;
}

/**
 * The IPv4 addresses an IPv6 address carries: IPv4-compatible `::a.b.c.d` (::/96 but :: and ::1), IPv4-mapped
 * `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96` (RFC 6052), 6to4 `2002:AABB:CCDD::/48` and Teredo `2001:0:SSSS:SSSS::/32`
 * (the server, and the client stored inverted in the last 32 bits).
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts;
  const v4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((part) => part === 0);
  if (zeros(0, 6) && !(p[6] === 0 && p[7]! <= 1)) return [v4(p[6]!, p[7]!)];
  if (zeros(0, 5) && p[5] === 0xffff) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return [v4(p[6]!, p[7]!)];
  if (p[0] === 0x2002) return [v4(p[1]!, p[2]!)];
  if (p[0] === 0x2001 && p[1] === 0) return [v4(p[2]!, p[3]!), v4(p[6]! ^ 0xffff, p[7]! ^ 0xffff)];
  return [];
}

/** Lower-cased host name without brackets or a trailing dot. */
export function normalizeHost(hostname: string): string {
  return hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/** Why a host name (before DNS) may not be fetched, or null. IP literals are checked as addresses. */
export function refusedHostReason(hostname: string): string | null {
  const host = normalizeHost(hostname);
  if (!host) return 'is empty';
  if (METADATA_HOSTS.has(host)) return 'is a cloud metadata host';
  if (isIP(host)) return refusedAddressReason(host);
  // Spellings the URL parser leaves alone but a resolver might read as a number.
  if (/^[0-9.x]+$/i.test(host) || /^0x/i.test(host)) return 'is a numeric host that is not a valid address';
  return null;
}

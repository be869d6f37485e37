import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Host names of cloud metadata services, refused whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Metadata addresses, named for the error message (their ranges are refused anyway). */
const METADATA_ADDRESSES = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

/**
 * Why an IP address may not be fetched, or null when it may. Only globally routable unicast addresses pass:
 * ipaddr.js names every special range (loopback, private, linkLocal, carrierGradeNat, multicast, unspecified,
 * broadcast, uniqueLocal, reserved, 6to4, teredo, rfc6052, ...), and IPv4-mapped IPv6 is checked as IPv4.
 */
export function refusedAddressReason(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return 'is not an IP address';
  const parsed = ipaddr.process(bare);
  const normal = parsed.toString();
  if (METADATA_ADDRESSES.has(normal)) return 'is a cloud metadata address';
  const range = parsed.range();
  return range === 'unicast' ? null : `is in a ${range} range`;
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

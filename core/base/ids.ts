import { v7 as uuidv7 } from 'uuid';

/** The single id generator: UUIDv7 (time-ordered), as CONTRACT.md section 3 fixes. */
export function newId(): string {
  return uuidv7();
}

/**
 * The id below which lie exactly the ids made before `at` (UUIDv7 starts with its Unix time in
 * milliseconds, as 12 hex digits), for range scans by time over an id index.
 */
export function idsBefore(at: string | Date): string {
  const hex = new Date(at).getTime().toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** ISO 8601 UTC with milliseconds; lexicographic order is time order, on both engines. */
export function nowIso(): string {
  return new Date().toISOString();
}

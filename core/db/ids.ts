import { v7 as uuidv7 } from 'uuid';

/** The single id generator: UUIDv7 (time-ordered), as CONTRACT.md section 3 fixes. */
export function newId(): string {
  return uuidv7();
}

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** ISO 8601 UTC with milliseconds; lexicographic order is time order, on both engines. */
export function nowIso(): string {
  return new Date().toISOString();
}

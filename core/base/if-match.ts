import { VersionMismatch } from './errors.js';

/**
 * Holds a write to the version its `If-Match` names (RFC 9110 13.1.1): absent or empty, nothing is asked; `*`, any
 * current version; else a list of entity tags (`"3"`, `W/"3"`, `"2", "3"`), one of which must be `actual`, or 412
 * version_mismatch. Records, roles and schema changes alike.
 */
export function checkIfMatch(ifMatch: string | null | undefined, actual: number): void {
  if (ifMatch === undefined || ifMatch === null || ifMatch.trim() === '' || ifMatch.trim() === '*') return;
  const expected = ifMatch.split(',').map((v) => v.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'));
  if (!expected.includes(String(actual))) throw VersionMismatch({ expected: ifMatch.slice(0, 40), actual });
}

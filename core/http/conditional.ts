/** Conditional requests: the one reading of `If-None-Match` (public content, public assets, signed downloads). */

/** Whether an If-None-Match header (a list of possibly weak tags, or `*`) matches the current ETag. */
export function matchesEtag(header: string, etag: string): boolean {
  if (!header) return false;
  // The usual case, a client sending back the one tag it was given, without splitting the header.
  if (header === etag) return true;
  if (header.trim() === '*') return true;
  const current = opaqueTag(etag);
  for (const tag of header.split(',')) if (opaqueTag(tag) === current) return true;
  return false;
}

/** A tag without surrounding space and without the weak prefix `W/`. */
function opaqueTag(tag: string): string {
  return tag.trim().replace(/^W\//, '');
}

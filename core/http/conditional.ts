/** Conditional requests: the one reading of `If-None-Match` (public content, public assets, signed downloads). */

/** Whether an If-None-Match header (a list of possibly weak tags, or `*`) matches the current ETag. */
export function matchesEtag(header: string, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  const strip = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => strip(tag) === strip(etag));
}

const TRACKING = /^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid)$/i;

/**
 * One spelling per page, so a crawler fetches it once: no fragment, no default port, no tracking
 * parameters, sorted query, no trailing slash (except the root), `index.html` dropped.
 */
export function normaliseUrl(input: string): string {
  const url = new URL(input);
  url.hash = '';
  url.username = '';
  url.password = '';
  const params = [...url.searchParams.entries()].filter(([k]) => !TRACKING.test(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  url.search = params.length ? `?${new URLSearchParams(params).toString()}` : '';
  let path = url.pathname.replace(/\/{2,}/g, '/').replace(/\/index\.html?$/i, '/');
  if (path.length > 1) path = path.replace(/\/+$/, '');
  url.pathname = path || '/';
  return url.toString();
}

/** Whether a path plainly names something other than a page (an image, a document, an archive). */
export function looksLikeAsset(url: string): boolean {
  return /\.(png|jpe?g|gif|webp|svg|ico|css|js|mjs|json|xml|pdf|zip|gz|tar|mp[34]|mov|avi|woff2?|ttf|eot|txt|csv|docx?|xlsx?|pptx?)$/i.test(new URL(url).pathname);
}

/** A route path in OpenAPI form and the names of its path parameters. */
export interface OpenApiPath {
  path: string;
  params: Array<{ name: string; wildcard: boolean }>;
}

const PARAM = /([:*])([A-Za-z_$][A-Za-z0-9_$]*|"[^"]+")/g;

/**
 * A @koa/router (path-to-regexp 8) path → its OpenAPI paths: `:id` → `{id}`, the wildcard `*path` →
 * `{path}`, and each optional group `{…}` expanded into the paths with and without it.
 */
export function toOpenApiPaths(koaPath: string): OpenApiPath[] {
  return expandOptional(koaPath).map((variant) => {
    const params: OpenApiPath['params'] = [];
    const path = variant.replace(PARAM, (_all, kind: string, rawName: string) => {
      const name = rawName.startsWith('"') ? rawName.slice(1, -1) : rawName;
      params.push({ name, wildcard: kind === '*' });
      return `{${name}}`;
    }).replace(/\\(.)/g, '$1');
    return { path: path === '' ? '/' : path, params };
  });
}

/** Expands the innermost optional groups first, until none is left. */
function expandOptional(path: string): string[] {
  const group = /(?<!\\)\{([^{}]*)(?<!\\)\}/.exec(path);
  if (!group) return [path];
  const before = path.slice(0, group.index);
  const after = path.slice(group.index + group[0].length);
  return [...expandOptional(`${before}${group[1]}${after}`), ...expandOptional(`${before}${after}`)];
}

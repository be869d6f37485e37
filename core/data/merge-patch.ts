/** JSON Merge Patch (RFC 7396): objects merge recursively, null removes, anything else replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Schema = Record<string, unknown>;

/**
 * The schema of a JSON merge patch of documents that `schema` describes, for a route's body: each declared property
 * optional, null (removes it) or a patch of its own value (an object with properties is patched in turn; anything else,
 * arrays too, is replaced whole); unknown keys refused where the document refuses them. `required` is left to the
 * check of the merged document. The root's `$defs` stay, so local references resolve.
 */
export function mergePatchSchema(schema: Schema): Schema {
  const { required: _required, ...rest } = schema;
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (!properties) return rest;
  return {
    ...rest,
    properties: Object.fromEntries(Object.entries(properties).map(([name, inner]) => [name, {
      anyOf: [inner.type === 'object' && inner.properties ? mergePatchSchema(inner) : inner, { type: 'null' }],
    }])),
  };
}

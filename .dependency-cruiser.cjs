/**
 * Import rules of core/ (npm run lint:imports; docs/architecture.md says why). Layers, from the bottom up:
 * a module imports only from its own layer or the ones below it, and no file of core/ takes part in an
 * import cycle (type-only imports count: a cycle of types is a cycle of meaning).
 */

/** core/'s layers, bottom first: folders (`name/`) and top-level files (`name.ts`). */
const LAYERS = [
  ['base', ['base/']],
  ['db', ['db/']],
  ['basic services', ['tenants/', 'metrics/', 'hooks/', 'fetch/', 'mail/']],
  ['http', ['http/']],
  ['registry and stores', ['metadata/', 'ratelimit/', 'storage/', 'knowledge/', 'access/', 'audit/']],
  ['events', ['events/']],
  ['records and settings', ['data/', 'settings/']],
  ['content workflow', ['workflow/']],
  ['self-description', ['openapi/', 'docs/', 'admin-console/']],
  ['pack contract', ['kernel/']],
  ['pack door and tools', ['pack-api.ts', 'mcp/']],
  ['composition root', ['app.ts']],
  ['entry point', ['main.ts']],
];

/**
 * The one import that points up, and why it stays: the request context carries its transaction as the
 * database's `Sql` interface (a type; db/sql.ts imports nothing of the layers above db).
 */
const KNOWN_UPWARD = { from: '^core/base/request-context\\.ts$', to: '^core/db/sql\\.ts$' };

const pathOf = (entries) => `^core/(${entries.map((e) => e.replace(/\./g, '\\.')).join('|')})`;

const layerRules = LAYERS.slice(0, -1).map(([name, entries], i) => ({
  name: `layer: ${name}`,
  severity: 'error',
  comment: `${entries.join(', ')} must not import from a layer above it (${LAYERS.slice(i + 1).map(([n]) => n).join(', ')})`,
  from: { path: pathOf(entries), ...(name === 'base' ? { pathNot: KNOWN_UPWARD.from } : {}) },
  to: { path: pathOf(LAYERS.slice(i + 1).flatMap(([, e]) => e)) },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file of core/ imports itself through others: break the cycle (move the shared piece down)',
      from: { path: '^core/' },
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'layer: base (known)',
      severity: 'error',
      comment: 'base imports nothing above it but the database\'s Sql type',
      from: { path: KNOWN_UPWARD.from },
      to: { path: pathOf(LAYERS.slice(1).flatMap(([, e]) => e)), pathNot: KNOWN_UPWARD.to },
    },
    {
      name: 'layer: unplaced',
      severity: 'error',
      comment: 'A file of core/ outside every layer: add its folder to LAYERS in .dependency-cruiser.cjs',
      from: { path: '^core/', pathNot: pathOf(LAYERS.flatMap(([, e]) => e)) },
      to: { path: '^core/' },
    },
  ],
  options: {
    includeOnly: '^core/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js'] },
  },
};

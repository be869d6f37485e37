import { createRequire } from 'node:module';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/**
 * npm run build:admin (and `npm install`, through `prepare`): writes the console's entry to the packs' screens
 * (admin/pack-screens.generated.ts, from each pack's `admin` in config/packs.ts), builds the console with Vite into
 * admin/dist, then writes a gzip copy of each text file beside it (the service sends those to browsers
 * that accept gzip). No network. Where the build tools are not installed (`npm ci --omit=dev`), it says
 * so and stops without failing the install: such installs serve a console built elsewhere (see the Dockerfile).
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const require = createRequire(import.meta.url);

let vite: typeof import('vite');
try {
  require.resolve('vite');
  vite = await import('vite');
} catch {
  console.log('admin console: vite is not installed (production install?), the console is not built here');
  process.exit(0);
}

const started = Date.now();
// The packs' console screens, from their declarations: the entry module the console imports them through.
const { packs } = await import('../config/packs.js');
const { writePackScreens } = await import('./admin-pack-screens.js');
if (writePackScreens(packs)) console.log('admin console: admin/pack-screens.generated.ts written from config/packs.ts');
await vite.build({ configFile: join(root, 'admin', 'vite.config.ts'), logLevel: 'warn' });
const dist = join(root, 'admin', 'dist');
let files = 0;
for (const name of readdirSync(dist, { recursive: true, encoding: 'utf8' })) {
  if (!/\.(js|css|html|svg|json)$/.test(name)) continue;
  writeFileSync(join(dist, `${name}.gz`), gzipSync(readFileSync(join(dist, name)), { level: 9 }));
  files += 1;
}
console.log(`admin console built into admin/dist in ${((Date.now() - started) / 1000).toFixed(1)} s (${files} files, gzip copies beside them)`);

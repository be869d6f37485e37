import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder (the one holding package.json, schemas/ and admin/dist/), found from this file
 * whether it runs from the sources (core/base/package-root.ts, under tsx) or compiled (dist/core/base/package-root.js,
 * under npm start). Files the service reads at run time are named from here, never relative to a module's
 * own URL, which differs between the two.
 */
export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package: fromRoot('schemas', 'erp') → <root>/schemas/erp. */
export function fromRoot(...segments: string[]): string {
  return join(PACKAGE_ROOT, ...segments);
}

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}`);
  }
}

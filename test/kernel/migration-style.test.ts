import { expect } from 'chai';
import { readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packs } from '../../config/packs.js';
import { allMigrations } from '../../core/app.js';
import type { Migration } from '../../core/db/migration.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every migration file: core/db/migrations/*.ts and packs/<pack>/migrations/*.ts. */
function migrationFiles(): string[] {
  const dirs = [join(ROOT, 'core/db/migrations'), ...readdirSync(join(ROOT, 'packs')).map((p) => join(ROOT, 'packs', p, 'migrations'))];
  return dirs.flatMap((dir) => {
    try {
      return readdirSync(dir).filter((f) => f.endsWith('.ts')).map((f) => join(dir, f));
    } catch {
      return [];
    }
  });
}

const isMigration = (value: unknown): value is Migration => typeof value === 'object' && value !== null
  && typeof (value as Migration).name === 'string' && typeof (value as Migration).up === 'function' && typeof (value as Migration).down === 'function';

describe('migrations: one style for the kernel and the packs (core/db/migration.ts)', () => {
  it('each file under a migrations/ folder holds one migration, named as the file, and every migration that runs has its file', async () => {
    const named: string[] = [];
    for (const file of migrationFiles()) {
      const migrations = Object.values(await import(pathToFileURL(file).href)).filter(isMigration);
      expect(migrations.map((m) => m.name), file).to.deep.equal([basename(file, '.ts').replaceAll('-', '_')]);
      named.push(migrations[0].name);
    }
    expect(allMigrations(packs).map((m) => m.name).sort()).to.deep.equal(named.sort());
  });
});

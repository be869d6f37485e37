import type { Knex } from 'knex';
import type { Dialect } from './dialects/dialect.js';

/**
 * A migration, declared explicitly (no folder scanning). The same migration serves SQLite and PostgreSQL;
 * `dialect` is there for the rare engine difference. Names sort in the order they must run:
 * `<area number>_<what>` with kernel 0000-0099, events 0100, tenant-admin 0200, cms 0300,
 * storage 0400, crm/erp 0500, observability 0600.
 *
 * One style for the kernel and every pack: one migration per file, `migrations/NNNN-what.ts` of its owner
 * (core/db/migrations/ for the kernel, packs/<pack>/migrations/ for a pack), the file named as the migration
 * (`0400-storage.ts` holds `0400_storage`), listed by the composition root (core/app.ts) or by the pack's
 * definePack({ migrations }). The name is what knex_migrations records: a migration that ran keeps it.
 */
export interface Migration {
  name: string;
  up(knex: Knex, dialect: Dialect): Promise<void>;
  down(knex: Knex, dialect: Dialect): Promise<void>;
}

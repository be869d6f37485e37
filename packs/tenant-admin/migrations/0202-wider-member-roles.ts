import type { Migration } from '../../../core/pack-api.js';

/**
 * A membership's or invitation's role may name a custom role (CONTRACT.md 16.1), whose name has up to 40
 * characters: the role columns grow from 20 to 40 on PostgreSQL (SQLite does not enforce a varchar's length).
 */
export const widerMemberRolesMigration: Migration = {
  name: '0202_wider_member_roles',
  async up(knex, dialect) {
    if (dialect.name !== 'postgres') return;
    for (const table of ['tenant_members', 'tenant_invitations']) await knex.raw(`ALTER TABLE ${table} ALTER COLUMN role TYPE varchar(40)`);
  },
  async down(knex, dialect) {
    if (dialect.name !== 'postgres') return;
    for (const table of ['tenant_members', 'tenant_invitations']) await knex.raw(`ALTER TABLE ${table} ALTER COLUMN role TYPE varchar(20)`);
  },
};

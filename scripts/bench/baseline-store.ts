import Database from 'better-sqlite3';
import pg from 'pg';
import type { CrmEvent } from '../../packs/crm/events.repository.js';
import { fixedTenant } from './twin-engine.js';

/**
 * The hand-written comparator's storage: one table, tuned as a good engineer would tune it (a composite
 * index serving tenant + newest-first, an expression index serving tenant + category + newest-first,
 * statistics gathered). SQL by hand, no query builder.
 */

export interface BaselineRecord {
  id: string;
  data: Record<string, unknown>;
  createdAt: string;
}

export interface BaselineRow {
  id: string;
  data: string | Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

/** A first-party event as the comparator writes it into the CRM's crm_events table (never from a bot). */
export type BaselineEvent = Omit<CrmEvent, 'bot'>;

const INSERT_EVENT = 'INSERT INTO crm_events (tenant_id, id, event_id, event_type, customer_ref, event_data, occurred_at, received_at, bot)';

export interface BaselineStore {
  insert(tenantId: string, id: string, data: Record<string, unknown>, now: string): Promise<void>;
  /** The same insert as POST /crm/events: into crm_events, a duplicate eventId skipped; true when inserted. */
  insertEvent(tenantId: string, event: BaselineEvent): Promise<boolean>;
  newest(tenantId: string, limit: number): Promise<BaselineRow[]>;
  newestInCategory(tenantId: string, category: string, limit: number): Promise<BaselineRow[]>;
  close(): Promise<void>;
}

const TABLE = 'bench_baseline_items';

export function openBaselineStore(url: string): BaselineStore {
  return url.startsWith('sqlite:') ? sqliteStore(url.slice('sqlite:'.length)) : postgresStore(url);
}

function sqliteStore(file: string): BaselineStore {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(`INSERT INTO ${TABLE} (tenant_id, id, data, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`);
  const newest = db.prepare(fixedTenant(`SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`));
  const inCategory = db.prepare(fixedTenant(
    `SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = ? AND json_extract(data, '$.category') = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
  ));
  const insertEvent = db.prepare(`${INSERT_EVENT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (tenant_id, event_id) DO NOTHING`);
  return {
    async insert(tenantId, id, data, now) {
      insert.run(tenantId, id, JSON.stringify(data), now, now);
    },
    async insertEvent(tenantId, e) {
      return insertEvent.run(tenantId, e.id, e.eventId, e.eventType, e.customerRef, JSON.stringify(e.eventData), e.occurredAt, e.receivedAt).changes > 0;
    },
    async newest(tenantId, limit) {
      return newest.all(tenantId, limit) as BaselineRow[];
    },
    async newestInCategory(tenantId, category, limit) {
      return inCategory.all(tenantId, category, limit) as BaselineRow[];
    },
    async close() {
      db.close();
    },
  };
}

function postgresStore(url: string): BaselineStore {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return {
    async insert(tenantId, id, data, now) {
      await pool.query({
        name: 'bl_insert',
        text: `INSERT INTO ${TABLE} (tenant_id, id, data, version, created_at, updated_at) VALUES ($1, $2, $3, 1, $4, $4)`,
        values: [tenantId, id, JSON.stringify(data), now],
      });
    },
    async insertEvent(tenantId, e) {
      const res = await pool.query({
        name: 'bl_insert_event',
        text: `${INSERT_EVENT} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, false) ON CONFLICT (tenant_id, event_id) DO NOTHING`,
        values: [tenantId, e.id, e.eventId, e.eventType, e.customerRef, JSON.stringify(e.eventData), e.occurredAt, e.receivedAt],
      });
      return (res.rowCount ?? 0) > 0;
    },
    async newest(tenantId, limit) {
      const res = await pool.query({
        name: 'bl_newest',
        text: `SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
        values: [tenantId, limit],
      });
      return res.rows;
    },
    async newestInCategory(tenantId, category, limit) {
      const res = await pool.query({
        name: 'bl_category',
        text: `SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = $1 AND (data->>'category') = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
        values: [tenantId, category, limit],
      });
      return res.rows;
    },
    async close() {
      await pool.end();
    },
  };
}

/** Creates the comparator's table and indexes, loads records for each tenant, gathers statistics. */
export async function loadBaseline(url: string, byTenant: Array<{ tenantId: string; records: BaselineRecord[] }>): Promise<void> {
  if (url.startsWith('sqlite:')) {
    const db = new Database(url.slice('sqlite:'.length));
    db.pragma('journal_mode = WAL');
    db.exec(`CREATE TABLE ${TABLE} (tenant_id varchar(63) NOT NULL, id varchar(36) NOT NULL, data json NOT NULL, version integer NOT NULL,
      created_at varchar(30) NOT NULL, updated_at varchar(30) NOT NULL, PRIMARY KEY (tenant_id, id))`);
    db.exec(`CREATE INDEX ${TABLE}_newest ON ${TABLE} (tenant_id, created_at, id)`);
    db.exec(`CREATE INDEX ${TABLE}_category ON ${TABLE} (tenant_id, json_extract(data, '$.category'), created_at, id)`);
    const insert = db.prepare(`INSERT INTO ${TABLE} VALUES (?, ?, ?, 1, ?, ?)`);
    db.transaction(() => {
      for (const { tenantId, records } of byTenant) {
        for (const r of records) insert.run(tenantId, r.id, JSON.stringify(r.data), r.createdAt, r.createdAt);
      }
    })();
    db.exec('ANALYZE');
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE TABLE ${TABLE} (tenant_id varchar(63) NOT NULL, id varchar(36) NOT NULL, data jsonb NOT NULL, version integer NOT NULL,
      created_at varchar(30) NOT NULL, updated_at varchar(30) NOT NULL, PRIMARY KEY (tenant_id, id))`);
    await client.query('BEGIN');
    for (const { tenantId, records } of byTenant) {
      for (let i = 0; i < records.length; i += 1000) {
        const batch = records.slice(i, i + 1000);
        const values: unknown[] = [];
        const tuples = batch.map((r, j) => {
          values.push(tenantId, r.id, JSON.stringify(r.data), r.createdAt);
          const b = j * 4;
          return `($${b + 1}, $${b + 2}, $${b + 3}, 1, $${b + 4}, $${b + 4})`;
        });
        await client.query(`INSERT INTO ${TABLE} VALUES ${tuples.join(', ')}`, values);
      }
    }
    await client.query('COMMIT');
    await client.query(`CREATE INDEX ${TABLE}_newest ON ${TABLE} (tenant_id, created_at, id)`);
    await client.query(`CREATE INDEX ${TABLE}_category ON ${TABLE} (tenant_id, (data->>'category'), created_at, id)`);
    await client.query(`ANALYZE ${TABLE}`);
  } finally {
    await client.end();
  }
}

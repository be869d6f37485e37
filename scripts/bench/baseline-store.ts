import Database from 'better-sqlite3';
import pg from 'pg';
import type { CrmEvent } from '../../packs/crm/events.repository.js';
import { v7 as uuidv7 } from 'uuid';
import { AUDIT_INSERT, countSql, fanoutSql, fixedTenant, OUTBOX_INSERT, REVISION_INSERT } from './twin-engine.js';

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
  /**
   * A create writes the rows the service's create writes (STYLE.md: records, outbox, revision, audit), in one
   * transaction: the record, its revision and audit entry, its outbox event with the deliveries to the tenant's
   * matching connectors (none here), and its part of the record count. SQLite: prepared statements, synchronous,
   * one transaction; PostgreSQL: one statement (a CTE of the inserts), one round trip, as the service sends it.
   */
  insert(tenantId: string, id: string, data: Record<string, unknown>, now: string): Promise<void>;
  /** The same insert as POST /crm/events: into crm_events, a duplicate eventId skipped; true when inserted. */
  insertEvent(tenantId: string, event: BaselineEvent): Promise<boolean>;
  newest(tenantId: string, limit: number): Promise<BaselineRow[]>;
  newestInCategory(tenantId: string, category: string, limit: number): Promise<BaselineRow[]>;
  close(): Promise<void>;
}

const TABLE = 'bench_baseline_items';
/** The comparator's records as the history and the outbox name them (no schema of the service: schema id 0). */
const NAMESPACE = 'bench';
const SCHEMA = 'baseline_item';
const EVENT = `${NAMESPACE}.${SCHEMA}.created`;
const ACTOR = 'bench-user';

/** The record as the service answers it and keeps it in its revision and event. */
function recordText(id: string, data: Record<string, unknown>, now: string): string {
  return JSON.stringify({ id, ...data, createdAt: now, updatedAt: now, version: 1 });
}

export function openBaselineStore(url: string): BaselineStore {
  return url.startsWith('sqlite:') ? sqliteStore(url.slice('sqlite:'.length)) : postgresStore(url);
}

function sqliteStore(file: string): BaselineStore {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.function('hp_new_id', { deterministic: false }, () => uuidv7());
  const insert = db.prepare(`INSERT INTO ${TABLE} (tenant_id, id, data, version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)`);
  const revision = db.prepare(`${REVISION_INSERT} VALUES (?, '${NAMESPACE}', '${SCHEMA}', ?, 1, 'create', ?, 'user', '${ACTOR}', NULL, ?)`);
  const audit = db.prepare(`${AUDIT_INSERT} VALUES (?, ?, ?, 'user', '${ACTOR}', NULL, 'record.created', ?, ?)`);
  const outbox = db.prepare(`${OUTBOX_INSERT} VALUES (?, ?, '${EVENT}', NULL, ?, ?)`);
  const fanout = db.prepare(fanoutSql(true));
  const count = db.prepare(countSql(true));
  const create = db.transaction((tenantId: string, id: string, data: Record<string, unknown>, now: string) => {
    const record = recordText(id, data, now);
    insert.run(tenantId, id, JSON.stringify(data), now, now);
    revision.run(tenantId, id, now, record);
    audit.run(tenantId, uuidv7(), now, `${NAMESPACE}.${SCHEMA}/${id}`, uuidv7());
    const eventId = uuidv7();
    outbox.run(tenantId, eventId, `{"namespace":"${NAMESPACE}","schema":"${SCHEMA}","id":"${id}","record":${record},"previous":null}`, now);
    fanout.run(eventId, EVENT, now, now, now, tenantId, 1, null, EVENT, EVENT);
    count.run(tenantId, 0, '');
  });
  // BEGIN IMMEDIATE, as the service's write transactions: two processes on one file never deadlock upgrading a read lock.
  const createImmediate = create.immediate;
  const newest = db.prepare(fixedTenant(`SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`));
  const inCategory = db.prepare(fixedTenant(
    `SELECT id, data, version, created_at, updated_at FROM ${TABLE} WHERE tenant_id = ? AND json_extract(data, '$.category') = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
  ));
  const insertEvent = db.prepare(`${INSERT_EVENT} VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (tenant_id, event_id) DO NOTHING`);
  return {
    async insert(tenantId, id, data, now) {
      createImmediate(tenantId, id, data, now);
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

/** The outbox's fan-out with the create's values in place of its bindings (see fanoutSql). */
function pgFanout(): string {
  const values = ['$8', `'${EVENT}'`, '$4', '$4', '$4', '$1', 'true', 'NULL', `'${EVENT}'`, `'${EVENT}'`];
  let i = 0;
  return fanoutSql(false).replace(/\?/g, () => values[i++]);
}

/**
 * PostgreSQL's create in one statement: $1 tenant, $2 id, $3 document, $4 now, $5 the record's text, $6 the audit
 * entry's id, $7 the request id, $8 the event's id, $9 the count part's id, $10 the event's payload.
 */
const PG_CREATE = `WITH w0 AS (INSERT INTO ${TABLE} (tenant_id, id, data, version, created_at, updated_at) VALUES ($1, $2, $3, 1, $4, $4)),
  w1 AS (${REVISION_INSERT} VALUES ($1, '${NAMESPACE}', '${SCHEMA}', $2, 1, 'create', $4, 'user', '${ACTOR}', NULL, $5)),
  w2 AS (${AUDIT_INSERT} VALUES ($1, $6, $4, 'user', '${ACTOR}', NULL, 'record.created', '${NAMESPACE}.${SCHEMA}/' || $2, $7)),
  w3 AS (${OUTBOX_INSERT} VALUES ($1, $8, '${EVENT}', NULL, $10, $4)),
  w4 AS (${pgFanout()}),
  w5 AS (INSERT INTO record_counts (tenant_id, schema_id, id, n) VALUES ($1, 0, $9, 1))
  SELECT 1`;

function postgresStore(url: string): BaselineStore {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  return {
    async insert(tenantId, id, data, now) {
      const record = recordText(id, data, now);
      const eventId = uuidv7();
      await pool.query({ name: 'bl_insert', text: PG_CREATE, values: [tenantId, id, JSON.stringify(data), now, record, uuidv7(), uuidv7(), eventId, uuidv7(),
        `{"namespace":"${NAMESPACE}","schema":"${SCHEMA}","id":"${id}","record":${record},"previous":null}`] });
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

import { createHash } from 'node:crypto';
import type { Database, Sql } from '../db/database.js';
import type { RequestContext } from '../base/request-context.js';
import { fieldTypes, isScalar, PLATFORM_SCOPE, type RegisteredSchema } from './schema-definition.js';
import { serverColumn } from './schema-definition.js';

interface SchemaRow {
  id: number;
  tenant_id: string;
  namespace: string;
  name: string;
  version: number;
  scope: 'platform' | 'tenant';
  title: string;
  description: string;
  definition: unknown;
  indexes: unknown;
  unique_sets: unknown;
  workflow: unknown;
  table_name: string;
  created_at: string;
  updated_at: string;
}

function indexSuffix(fields: string[]): string {
  return createHash('sha256').update(fields.join(',')).digest('hex').slice(0, 10);
}

/** The schemas table and the DDL of the record tables (one table per schema, named from its id). */
export class SchemasRepository {
  constructor(private readonly db: Database) {}

  private toSchema(row: SchemaRow): RegisteredSchema {
    const json = this.db.dialect.fromJson.bind(this.db.dialect);
    return {
      id: Number(row.id),
      tenantId: row.tenant_id === PLATFORM_SCOPE ? null : row.tenant_id,
      namespace: row.namespace,
      name: row.name,
      version: Number(row.version),
      scope: row.scope,
      title: row.title ?? '',
      description: row.description ?? '',
      schema: json(row.definition),
      indexes: json(row.indexes),
      unique: json(row.unique_sets),
      workflow: row.workflow === null || row.workflow === undefined ? null : json(row.workflow),
      tableName: row.table_name,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  /** The schema visible to a tenant (its own or the platform's), or null. */
  async findVisible(rc: RequestContext | null, tenantId: string | null, namespace: string, name: string): Promise<RegisteredSchema | null> {
    const scopes = tenantId ? [tenantId, PLATFORM_SCOPE] : [PLATFORM_SCOPE];
    const rows = await this.db.sql(rc).run(this.db.query<SchemaRow>('schemas').whereIn('tenant_id', scopes).where({ namespace, name }));
    const own = rows.find((r) => r.tenant_id !== PLATFORM_SCOPE) ?? rows[0];
    return own ? this.toSchema(own) : null;
  }

  async listVisible(rc: RequestContext | null, tenantId: string | null, namespace?: string): Promise<RegisteredSchema[]> {
    const scopes = tenantId ? [tenantId, PLATFORM_SCOPE] : [PLATFORM_SCOPE];
    const query = this.db.query<SchemaRow>('schemas').whereIn('tenant_id', scopes).orderBy(['namespace', 'name']);
    if (namespace) query.where({ namespace });
    return (await this.db.sql(rc).run(query)).map((r) => this.toSchema(r));
  }

  /** Inserts the schema row, then names its table from the id and creates it. Call inside a transaction. */
  async insert(rc: RequestContext, s: Omit<RegisteredSchema, 'id' | 'tableName'>): Promise<RegisteredSchema> {
    const conn = this.db.sql(rc);
    const dialect = this.db.dialect;
    const [inserted] = await conn.run(this.db.query('schemas')
      .insert({
        tenant_id: s.tenantId ?? PLATFORM_SCOPE,
        namespace: s.namespace,
        name: s.name,
        version: s.version,
        scope: s.scope,
        title: s.title,
        description: s.description,
        definition: dialect.toJson(s.schema),
        indexes: dialect.toJson(s.indexes),
        unique_sets: dialect.toJson(s.unique),
        workflow: s.workflow ? dialect.toJson(s.workflow) : null,
        table_name: '',
        created_at: s.createdAt,
        updated_at: s.updatedAt,
      })
      .returning('id'));
    const id = Number(typeof inserted === 'object' ? (inserted as { id: number }).id : inserted);
    const tableName = `rec_${id}`;
    await conn.run(this.db.query('schemas').where({ id }).update({ table_name: tableName }));
    const registered: RegisteredSchema = { ...s, id, tableName };
    await this.createRecordTable(conn, registered);
    await this.createIndexes(conn, registered);
    await this.insertVersion(rc, registered);
    return registered;
  }

  /** Updates a platform schema in place (a pack shipped a new version); adds any new indexes. */
  async updateDefinition(rc: RequestContext, existing: RegisteredSchema, next: Pick<RegisteredSchema, 'schema' | 'indexes' | 'unique' | 'workflow' | 'title' | 'description' | 'version' | 'updatedAt'>): Promise<RegisteredSchema> {
    const updated = { ...existing, ...next };
    await this.createIndexes(this.db.sql(rc), updated);
    await this.storeVersion(rc, updated);
    return updated;
  }

  /** Writes the schema's new current version (after a change, CONTRACT.md 12.1); indexes are the caller's. */
  async storeVersion(rc: RequestContext, next: RegisteredSchema): Promise<void> {
    const dialect = this.db.dialect;
    await this.db.sql(rc).run(this.db.query('schemas').where({ id: next.id }).update({
      definition: dialect.toJson(next.schema),
      indexes: dialect.toJson(next.indexes),
      unique_sets: dialect.toJson(next.unique),
      workflow: next.workflow ? dialect.toJson(next.workflow) : null,
      title: next.title,
      description: next.description,
      version: next.version,
      updated_at: next.updatedAt,
    }));
    await this.insertVersion(rc, next);
  }

  /** The schema's current version, read and (PostgreSQL) locked in rc's transaction. */
  async lockVersion(rc: RequestContext, id: number): Promise<number | null> {
    const lock = this.db.dialect.name === 'postgres' ? ' FOR UPDATE' : '';
    const rows = await this.db.sql(rc).rows<{ version: number }>(`SELECT version FROM schemas WHERE id = ?${lock}`, [id]);
    return rows[0] ? Number(rows[0].version) : null;
  }

  private async insertVersion(rc: RequestContext, s: RegisteredSchema): Promise<void> {
    const dialect = this.db.dialect;
    await this.db.sql(rc).run(this.db.query('schema_versions').insert({
      tenant_id: s.tenantId ?? PLATFORM_SCOPE,
      schema_id: s.id,
      version: s.version,
      title: s.title,
      description: s.description,
      definition: dialect.toJson(s.schema),
      indexes: dialect.toJson(s.indexes),
      unique_sets: dialect.toJson(s.unique),
      created_at: s.updatedAt,
    }));
  }

  /** Every version of a schema, oldest first. */
  async listVersions(rc: RequestContext, s: RegisteredSchema) {
    const json = this.db.dialect.fromJson.bind(this.db.dialect);
    const rows = await this.db.sql(rc).run(this.db.query('schema_versions')
      .where({ tenant_id: s.tenantId ?? PLATFORM_SCOPE, schema_id: s.id }).orderBy('version'));
    return rows.map((r: any) => ({
      version: Number(r.version), title: r.title ?? '', description: r.description ?? '',
      schema: json(r.definition), indexes: json(r.indexes), unique: json(r.unique_sets), createdAt: r.created_at,
    }));
  }

  /** Removes a schema: its record table, its versions, its counters and its row. Inside a transaction. */
  async remove(rc: RequestContext, s: RegisteredSchema): Promise<void> {
    const conn = this.db.sql(rc);
    await conn.run(this.db.query.schema.dropTable(s.tableName));
    await conn.run(this.db.query('schema_versions').where({ tenant_id: s.tenantId ?? PLATFORM_SCOPE, schema_id: s.id }).delete());
    const counters = this.db.query('record_counts').where({ schema_id: s.id });
    await conn.run((s.tenantId ? counters.where({ tenant_id: s.tenantId }) : counters).delete());
    await conn.run(this.db.query('schemas').where({ id: s.id }).delete());
  }

  /**
   * The statements of a schema's declared indexes and unique sets, by index name. `concurrently`: built
   * without blocking writes (PostgreSQL; outside any transaction).
   */
  indexStatements(s: RegisteredSchema, concurrently = false): Map<string, string> {
    const types = fieldTypes(s.schema);
    const expr = (field: string) => {
      const column = serverColumn(field)?.column;
      if (column) return column;
      const type = types.get(field);
      return this.db.dialect.jsonField(field, isScalar(type) ? type : 'string');
    };
    const how = concurrently && this.db.dialect.name === 'postgres' ? ' CONCURRENTLY' : '';
    const statements = new Map<string, string>();
    // Index names come from their fields, so a new schema version keeps the indexes it still declares.
    for (const fields of s.indexes) {
      const name = `${s.tableName}_ix_${indexSuffix(fields)}`;
      const cols = ['tenant_id', ...fields.map(expr), ...(fields.includes('createdAt') ? [] : ['created_at']), 'id'];
      statements.set(name, `CREATE INDEX${how} IF NOT EXISTS ${name} ON ${s.tableName} (${cols.join(', ')})`);
    }
    for (const fields of s.unique) {
      const name = this.uniqueIndexName(s.tableName, fields);
      statements.set(name, `CREATE UNIQUE INDEX${how} IF NOT EXISTS ${name} ON ${s.tableName} (${['tenant_id', ...fields.map(expr)].join(', ')})`);
    }
    return statements;
  }

  /** The name of the unique index of a field list on a record table. */
  uniqueIndexName(tableName: string, fields: string[]): string {
    return `${tableName}_ux_${indexSuffix(fields)}`;
  }

  /** The suffix of the index names of a field list. */
  indexSuffix(fields: string[]): string {
    return indexSuffix(fields);
  }

  /** Runs DDL on rc's transaction, or on the pool outside one. */
  async ddl(rc: RequestContext | null, sql: string): Promise<void> {
    await this.db.sql(rc).run(this.db.query.raw(sql));
  }

  private async createRecordTable(conn: Sql, s: RegisteredSchema): Promise<void> {
    await conn.run(this.db.query.schema.createTable(s.tableName, (t) => {
      t.string('tenant_id', 63).notNullable();
      t.string('id', 36).notNullable();
      t.jsonb('data').notNullable();
      t.integer('version').notNullable();
      t.string('created_at', 30).notNullable();
      t.string('updated_at', 30).notNullable();
      t.primary(['tenant_id', 'id']);
    }));
    // Listing newest first is always indexed.
    await conn.run(this.db.query.raw(`CREATE INDEX ${s.tableName}_created ON ${s.tableName} (tenant_id, created_at, id)`));
    // PostgreSQL: equality on any field of the document is served by one GIN index.
    const documentIndex = this.db.dialect.documentIndexSql(s.tableName);
    if (documentIndex) await conn.run(this.db.query.raw(documentIndex));
  }

  /** Declared indexes and unique sets become expression indexes led by tenant_id; indexes end with created_at, id. */
  private async createIndexes(conn: Sql, s: RegisteredSchema): Promise<void> {
    for (const sql of this.indexStatements(s).values()) await conn.run(this.db.query.raw(sql));
  }
}

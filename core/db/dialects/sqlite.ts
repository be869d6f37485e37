import type { Knex } from 'knex';
import { assertSafeField, type Dialect, type JsonScalarType } from './dialect.js';

export const sqliteDialect: Dialect = {
  name: 'sqlite',
  jsonField(field: string, _type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    // json_extract yields SQL integers/reals/text and 1/0 for booleans, so one expression serves every type.
    return `json_extract(${column}, '$.${field}')`;
  },
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'LIKE',
  isUniqueViolation(error) {
    const code = (error as { code?: string })?.code;
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  isForeignKeyViolation(error) {
    return (error as { code?: string })?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  },
  async analyze(knex: Knex, table: string) {
    assertSafeField(table);
    await knex.raw(`ANALYZE ${table}`);
  },
};

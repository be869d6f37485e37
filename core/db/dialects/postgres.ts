import type { Knex } from 'knex';
import { assertSafeField, type Dialect, type JsonScalarType } from './dialect.js';

export const postgresDialect: Dialect = {
  name: 'postgres',
  jsonField(field: string, type: JsonScalarType, column = 'data') {
    assertSafeField(field);
    const text = `(${column}->>'${field}')`;
    if (type === 'number' || type === 'integer') return `(${text}::numeric)`;
    if (type === 'boolean') return `(${text}::boolean)`;
    return text;
  },
  toJson: (value) => JSON.stringify(value),
  fromJson: (value) => (typeof value === 'string' ? JSON.parse(value) : value) as any,
  likeOperator: 'ILIKE',
  isUniqueViolation: (error) => (error as { code?: string })?.code === '23505',
  isForeignKeyViolation: (error) => (error as { code?: string })?.code === '23503',
  async analyze(knex: Knex, table: string) {
    assertSafeField(table);
    await knex.raw(`ANALYZE ${table}`);
  },
};

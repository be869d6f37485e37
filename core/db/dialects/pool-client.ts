/** knex's pool, or a transaction (core/db/unit-of-work.ts), as the kernel uses it: driver connections taken and given back. */
export interface PoolClient {
  acquireConnection(): Promise<object>;
  releaseConnection(connection: object): Promise<unknown>;
  /** The engine's placeholders for `?` ones (PostgreSQL: `$1, $2, ...`; `\\?` stays a literal `?`). */
  positionBindings(sql: string): string;
}

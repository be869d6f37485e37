import { expect } from 'chai';
import { translateDbError } from '../../core/db/translate-error.js';
import { AppError } from '../../core/base/errors.js';
import { sharedTestApp, type TestApp } from '../helpers/test-app.js';

/** The driver's own unique and foreign-key violations, raised for real on the engine under test. */
describe('driver error translation (core/db/translate-error.ts)', () => {
  let t: TestApp;

  before(async () => {
    t = await sharedTestApp();
  });

  const driverError = async (run: () => Promise<unknown>): Promise<unknown> => {
    try {
      await run();
    } catch (err) {
      return err;
    }
    throw new Error('the statement did not fail');
  };

  it('turns the engine\'s unique violation into 409 conflict', async () => {
    const knex = t.app.kernel.db.knex;
    const now = new Date().toISOString();
    const row = { id: `dup-${Date.now()}`, name: 'Dup', plan: 'free', status: 'active', created_at: now, updated_at: now };
    await knex('tenants').insert(row);
    const err = await driverError(() => knex('tenants').insert(row));
    expect((err as { code?: string }).code).to.equal(t.engine === 'sqlite' ? 'SQLITE_CONSTRAINT_PRIMARYKEY' : '23505');
    const translated = translateDbError(err);
    expect(translated).to.be.instanceOf(AppError);
    expect(translated).to.include({ status: 409, code: 'conflict' });
    expect(translated!.message).to.not.match(/tenants|UNIQUE constraint|duplicate key|SQLITE|23505/);
    // The column the driver names, as the field of the answer (#34).
    expect(translated!.details.map((d) => d.path)).to.deep.equal(['/id']);
  });

  it('turns the engine\'s foreign-key violation into 409 conflict', async () => {
    const knex = t.app.kernel.db.knex;
    const err = await driverError(() => knex('tenant_modules').insert({ tenant_id: 'no-such-tenant-fk', app_code: 'cms', is_enabled: true, updated_at: new Date().toISOString() }));
    expect((err as { code?: string }).code).to.equal(t.engine === 'sqlite' ? 'SQLITE_CONSTRAINT_FOREIGNKEY' : '23503');
    expect(translateDbError(err)).to.include({ status: 409, code: 'conflict' });
  });

  it('leaves other driver errors untranslated (they become 500 internal)', async () => {
    const err = await driverError(() => t.app.kernel.db.knex.raw('select * from no_such_table_here'));
    expect(translateDbError(err)).to.equal(null);
  });
});

import { dropLeftoverDatabases } from './engine.js';
import { closeLeftoverApps, closeSharedTestApp } from './test-app.js';
import { responseValidationReport } from './response-validation.js';

/**
 * Mocha root hooks: the shared app is closed once all files ran; then every response the test apps gave
 * must have matched their OpenAPI documents (test/helpers/response-validation.ts).
 */
export const mochaHooks = {
  async afterAll() {
    const { checked, failures } = await responseValidationReport();
    await closeSharedTestApp();
    await closeLeftoverApps();
    // What a test left behind (#34): no hp_test_* database or hp-test-* folder outlives the run.
    await dropLeftoverDatabases();
    if (process.env.RESPONSE_REPORT) console.log(`  responses checked against the OpenAPI document: ${checked}`);
    if (failures.length) {
      throw new Error(`${failures.length} responses do not match the OpenAPI document:\n${failures.join('\n')}`);
    }
  },
};

import { closeSharedTestApp } from './test-app.js';

/** Mocha root hooks: the shared app is closed once all files ran. */
export const mochaHooks = {
  async afterAll() {
    await closeSharedTestApp();
  },
};

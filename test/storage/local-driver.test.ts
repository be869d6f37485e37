import { storageSuite } from './storage-suite.js';

describe('storage mediator, local driver', () => {
  storageSuite('local');
});

import { storageSuite } from './storage-suite.js';

describe('storage mediator, s3 driver (s3rver on loopback)', () => {
  storageSuite('s3');
});

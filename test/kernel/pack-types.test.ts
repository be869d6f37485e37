import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { fromRoot } from '../../core/base/package-root.js';
import { packTypeFiles } from '../../scripts/pack-types.js';

describe('pack record types (npm run pack-types)', () => {
  it('the committed packs/<pack>/generated/*.ts are what the schema files generate today', async function () {
    this.timeout(30_000);
    const files = await packTypeFiles();
    expect(files.size).to.be.greaterThan(0);
    for (const [path, text] of files) {
      let committed = '';
      try {
        committed = readFileSync(fromRoot(path), 'utf8');
      } catch {
        // Missing: reported below as stale.
      }
      expect(committed, `${path} is stale: run npm run pack-types and commit it`).to.equal(text);
    }
  });
});

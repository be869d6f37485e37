import { fileURLToPath } from 'node:url';
import { scaffoldPack } from './pack-scaffold.js';

/** npm run new-pack -- <name> [thing]: the skeleton of a pack, its schema and a passing test. */
const [name, thing] = process.argv.slice(2);
if (!name) {
  console.error('Usage: npm run new-pack -- <name> [thing]   e.g. npm run new-pack -- helpdesk ticket');
  process.exit(1);
}
try {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const made = await scaffoldPack({ root, name, thing });
  console.log(`Created:\n${made.files.map((f) => `  ${f}`).join('\n')}\n`);
  console.log('List the pack in config/packs.ts:');
  console.log(`  ${made.listing.importLine}`);
  console.log(`  export const packs: PackDefinition[] = [..., ${made.listing.identifier}];\n`);
  console.log(`Test it:  TEST_DB=sqlite npm test -- test/packs/${name}`);
  console.log('Read docs/writing-a-pack.md for what each part does.');
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}

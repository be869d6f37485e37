import { parseArgs } from 'node:util';
import { benchCheckout } from './checkout.js';
import { DEFAULT_POSTGRES_URL, type Engine } from './harness.js';

/**
 * npm run bench:checkout [-- --engines sqlite,postgres --runs 5 --requests 2000 --connections 20 --products 1000 --orders 100000 --due 1000 --sweep-only]
 *
 * The checkout against its hand-written twin and the payment timeout sweep (scripts/bench/checkout.ts), alone;
 * `npm run bench` runs them too (scenario `checkout`) with its table of results.
 */
const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '5' },
    requests: { type: 'string', default: '2000' },
    connections: { type: 'string', default: '20' },
    products: { type: 'string', default: '1000' },
    orders: { type: 'string', default: '100000' },
    due: { type: 'string', default: '1000' },
    'sweep-only': { type: 'boolean', default: false },
    postgres: { type: 'string', default: DEFAULT_POSTGRES_URL },
  },
});
const options = {
  runs: Number(args.runs), requests: Number(args.requests), connections: Number(args.connections), products: Number(args.products),
  orders: Number(args.orders), due: Number(args.due), sweepOnly: args['sweep-only'],
};
for (const engine of args.engines!.split(',') as Engine[]) await benchCheckout(engine, options, args.postgres);
process.exit(0);

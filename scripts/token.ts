import { parseArgs } from 'node:util';
import jwt from 'jsonwebtoken';
import { loadConfig } from '../config/index.js';

const USAGE = `Usage: npm run -s token -- [--tenant acme] [--role admin|editor|viewer] [--sub alice] [--email a@b.c] [--superadmin] [--hours 8]

Prints a development JWT (HS256, signed with AUTH_JWT_SECRET) on stdout, e.g.
  TOKEN=$(npm run -s token -- --tenant acme --role admin)
(-s keeps npm's banner out of the captured output.)`;

/** npm run token -- --tenant acme --role admin [--sub alice] [--email a@b.c] [--superadmin] [--hours 8] */
let parsed;
try {
  parsed = parseArgs({
    options: {
      tenant: { type: 'string' },
      role: { type: 'string', default: 'admin' },
      sub: { type: 'string' },
      email: { type: 'string' },
      superadmin: { type: 'boolean', default: false },
      hours: { type: 'string', default: '8' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
} catch (err) {
  console.error(`${(err as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
const { values } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const config = loadConfig(process.env, { dotenv: true, devDefaults: true });
if (!config.auth.jwtSecret) {
  console.error('AUTH_JWT_SECRET is not set: development tokens are HS256 tokens signed with it.');
  process.exit(1);
}
if (!['admin', 'editor', 'viewer'].includes(values.role!)) {
  console.error('--role must be admin, editor or viewer');
  process.exit(1);
}
const roles = [values.role!, ...(values.superadmin ? ['superadmin'] : [])];
const claims: Record<string, unknown> = { sub: values.sub ?? `dev-${values.role}`, roles };
if (values.email) claims.email = values.email;
if (values.tenant) claims[config.auth.tenantClaim] = values.tenant;
const options: jwt.SignOptions = { algorithm: 'HS256', expiresIn: Number(values.hours) * 3600 };
if (config.auth.issuer) options.issuer = config.auth.issuer;
if (config.auth.audience) options.audience = config.auth.audience;
console.log(jwt.sign(claims, config.auth.jwtSecret, options));

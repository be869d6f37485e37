import { createSecretKey, KeyObject, timingSafeEqual } from 'node:crypto';
import { createLocalJWKSet, createRemoteJWKSet, errors as joseErrors, type JWSHeaderParameters } from 'jose';
import jwt, { type JwtPayload } from 'jsonwebtoken';
import type { Config } from '../../config/index.js';
import { InvalidToken, Unauthenticated } from '../base/errors.js';
import { ROLE_RANK, type Principal, type TenantRole } from '../base/request-context.js';

const VERIFIED_CACHE_SIZE = 10_000;
const CUSTOM_ROLE_PREFIX = 'role:';
const HS_ALGORITHMS: jwt.Algorithm[] = ['HS256'];
/** Each verifies only with its key kind (jose picks an RSA key for RS256, a P-256 key for ES256). */
const ASYMMETRIC_ALGORITHMS: jwt.Algorithm[] = ['RS256', 'ES256'];

/** Turns a presented API token (`pat_…`) into its principal; throws 401 invalid_token (core/access/api-tokens.service.ts). */
export interface ApiTokenVerifier {
  authenticate(secret: string): Promise<Principal>;
}

/**
 * Verifies `Authorization: Bearer ...` as CONTRACT.md section 2 fixes it: HS256 with AUTH_JWT_SECRET,
 * RS256/ES256 from AUTH_JWKS_URI (issuer and audience checked), algorithms pinned per key kind, `exp`
 * required; the test key outside production only; API tokens (`pat_…`, CONTRACT.md 16.2) in production too.
 */
export class Authenticator {
  private readonly jwks: IdentityProviderKeys | null;
  private readonly testKey: Buffer | null;
  /** The HS256 secret as a key object, made once (jsonwebtoken would rebuild it from the string per call). */
  private readonly hsKey: KeyObject | null;
  /** Tokens verified lately, by their exact text: a repeat costs a map lookup (bounded size and age). */
  private readonly verified = new Map<string, { principal: Principal; until: number }>();

  constructor(private readonly config: Config, private readonly apiTokens: ApiTokenVerifier | null = null) {
    this.jwks = config.auth.jwksUri ? identityProviderKeys(config.auth.jwksUri, config.auth.jwksCooldownMs) : null;
    this.testKey = !config.isProduction && config.testApiKey ? Buffer.from(config.testApiKey) : null;
    this.hsKey = config.auth.jwtSecret ? createSecretKey(Buffer.from(config.auth.jwtSecret, 'utf8')) : null;
  }

  /** Returns the principal, null when no credentials were sent; throws 401 for bad ones. */
  async authenticate(authorization: string | undefined): Promise<Principal | null> {
    if (!authorization) return null;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!match) throw InvalidToken('The Authorization header must be "Bearer <token>"');
    const token = match[1];
    if (this.isTestKey(token)) return testKeyPrincipal();
    if (token.startsWith('pat_') && this.apiTokens) return this.apiTokens.authenticate(token);
    if (token.split('.').length !== 3) throw InvalidToken();
    const now = Date.now();
    const hit = this.verified.get(token);
    // Each request gets its own copy, so that nothing a handler does to it leaks into the next request.
    if (hit && hit.until > now) return copyOf(hit.principal);
    const claims = await this.verify(token);
    const principal = this.principalFromClaims(claims);
    // Remembered until it expires, for at most a minute, so a rotated-out key stops working soon.
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, { principal, until: Math.min(claims.exp! * 1000, now + 60_000) });
    return copyOf(principal);
  }

  async require(authorization: string | undefined): Promise<Principal> {
    const principal = await this.authenticate(authorization);
    if (!principal) throw Unauthenticated();
    return principal;
  }

  private isTestKey(token: string): boolean {
    if (!this.testKey) return false;
    const given = Buffer.from(token);
    return given.length === this.testKey.length && timingSafeEqual(given, this.testKey);
  }

  private async verify(token: string): Promise<JwtPayload> {
    const decoded = jwt.decode(token, { complete: true });
    if (!decoded || typeof decoded.payload === 'string') throw InvalidToken();
    const alg = decoded.header.alg;
    const { issuer, audience, jwtSecret } = this.config.auth;
    const options: jwt.VerifyOptions = {};
    if (issuer) options.issuer = issuer;
    if (audience) options.audience = audience;

    let key: jwt.Secret;
    if (HS_ALGORITHMS.includes(alg as jwt.Algorithm) && jwtSecret && this.hsKey) {
      key = this.hsKey;
      options.algorithms = HS_ALGORITHMS;
    } else if (ASYMMETRIC_ALGORITHMS.includes(alg as jwt.Algorithm) && this.jwks) {
      if (!decoded.header.kid) throw InvalidToken('The token has no key id (kid)');
      key = await this.jwks({ alg, kid: String(decoded.header.kid) });
      options.algorithms = [alg as jwt.Algorithm];
    } else {
      throw InvalidToken(`The token algorithm "${String(alg).slice(0, 10)}" is not accepted`);
    }

    let payload: JwtPayload;
    try {
      payload = jwt.verify(token, key, options) as JwtPayload;
    } catch (err) {
      const name = (err as Error).name;
      throw InvalidToken(name === 'TokenExpiredError' ? 'The token has expired' : 'The token is invalid');
    }
    if (typeof payload.exp !== 'number') throw InvalidToken('The token has no expiry (exp)');
    if (typeof payload.sub !== 'string' || payload.sub === '') throw InvalidToken('The token has no subject (sub)');
    return payload;
  }

  private principalFromClaims(claims: JwtPayload): Principal {
    const roles = rolesOf(claims);
    const tenantClaim = claims[this.config.auth.tenantClaim];
    // `role:<name>` names a custom role of the token's tenant (CONTRACT.md 16.1); it never adds viewer.
    const customRoles = roles.filter((r) => r.startsWith(CUSTOM_ROLE_PREFIX)).map((r) => r.slice(CUSTOM_ROLE_PREFIX.length)).filter(Boolean);
    const custom = customRoles.length ? { customRoles, onlyCustomRoles: !roles.some((r) => r in ROLE_RANK) } : {};
    return {
      ...custom,
      userId: claims.sub!,
      // An address the identity provider has not verified never matches invitations or memberships.
      email: typeof claims.email === 'string' && claims.email_verified !== false ? claims.email.toLowerCase() : null,
      name: typeof claims.name === 'string' ? claims.name : null,
      tenantId: typeof tenantClaim === 'string' && tenantClaim !== '' ? tenantClaim : null,
      isSuperadmin: roles.includes('superadmin'),
      role: strongestRole(roles),
      roles,
      via: 'jwt',
    };
  }
}

/** The public key for the header's kid and alg; throws 401 when the identity provider publishes none. */
type IdentityProviderKeys = (header: JWSHeaderParameters) => Promise<KeyObject>;

/**
 * The identity provider's signing keys from AUTH_JWKS_URI, by jose: cached for 10 minutes, and an unknown
 * kid refetches the set at most once per cooldown (30 s), so a flood of made-up key ids cannot turn the
 * service into a load generator against the provider. When the provider cannot be reached, the keys it
 * last published keep working and it is not asked again before the cooldown has passed.
 */
function identityProviderKeys(uri: string, cooldownMs: number): IdentityProviderKeys {
  const remote = createRemoteJWKSet(new URL(uri), { cooldownDuration: cooldownMs, cacheMaxAge: 600_000, timeoutDuration: 5_000 });
  let lastPublished = createLocalJWKSet({ keys: [] });
  let unreachableUntil = 0;
  const find = async (header: JWSHeaderParameters) => {
    if (Date.now() >= unreachableUntil) {
      try {
        return await remote(header);
      } catch (err) {
        if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) throw err;
        // The fetch failed: counted like a fetch, so an unreachable provider is not hammered either.
        unreachableUntil = Date.now() + cooldownMs;
        lastPublished = createLocalJWKSet(remote.jwks() ?? { keys: [] });
      }
    }
    return lastPublished(header);
  };
  return async (header) => {
    try {
      return KeyObject.from(await find(header));
    } catch {
      const published = remote.jwks()?.keys.some((jwk) => jwk.kid === header.kid);
      throw InvalidToken(published ? `The token algorithm "${String(header.alg).slice(0, 10)}" does not fit its key` : 'The token was signed by an unknown key');
    }
  };
}

function copyOf(p: Principal): Principal {
  return p.customRoles ? { ...p, roles: [...p.roles], customRoles: [...p.customRoles] } : { ...p, roles: [...p.roles] };
}

function rolesOf(claims: JwtPayload): string[] {
  const direct = claims.roles;
  const realm = (claims.realm_access as { roles?: unknown } | undefined)?.roles;
  const list = [direct, realm].flatMap((r) => (Array.isArray(r) ? r : typeof r === 'string' ? r.split(/[\s,]+/) : []));
  return [...new Set(list.filter((r): r is string => typeof r === 'string' && r !== ''))];
}

function strongestRole(roles: string[]): TenantRole {
  let best: TenantRole = 'viewer';
  for (const role of roles) {
    if (role in ROLE_RANK && ROLE_RANK[role as TenantRole] > ROLE_RANK[best]) best = role as TenantRole;
  }
  return best;
}

function testKeyPrincipal(): Principal {
  return {
    userId: 'test-key', email: null, name: 'Test key', tenantId: null, isSuperadmin: true, role: 'admin', roles: ['superadmin'], via: 'test_key',
  };
}

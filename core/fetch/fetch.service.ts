import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';
import { UrlNotAllowed } from '../base/errors.js';
import { refusedAddressReason, refusedHostReason } from './address-policy.js';
import { FetchError } from './fetch-error.js';

/** Options of one outbound request. */
export interface SafeFetchOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole request timeout; default 15 s. */
  timeoutMs?: number;
  /** Response body cap; the body is cut there and `truncated` set. Default 5 MiB. */
  maxBytes?: number;
  /** Redirects followed (each hop checked again); default 0. */
  maxRedirects?: number;
  /** Aborts the request (for example on shutdown). */
  signal?: AbortSignal;
}

export interface SafeFetchResponse {
  status: number;
  headers: Record<string, string>;
  /** The final URL after redirects. */
  url: string;
  body: Buffer;
  truncated: boolean;
  durationMs: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Marks a refusal that happened inside the socket's DNS lookup, to be rethrown as url_not_allowed. */
class RefusedAddress extends Error {}

/**
 * The one outbound HTTP client of the product (connectors, imports, ingestion, LLM calls).
 * Refuses loopback, private, link-local, CGNAT, multicast and metadata addresses after DNS resolution
 * and on every redirect hop, unless ALLOW_PRIVATE_NETWORK_FETCH=true. The address checked is the one the
 * socket connects to: the agents resolve through `guardedLookup`, so there is no window between check and use.
 * Network failures and timeouts throw FetchError; refused URLs throw 400 url_not_allowed.
 */
export class FetchService {
  private readonly httpAgent: http.Agent;
  private readonly httpsAgent: https.Agent;

  constructor(readonly config: Config, readonly logger: Logger) {
    const lookup = this.guardedLookup();
    this.httpAgent = new http.Agent({ keepAlive: true, maxSockets: 256, lookup } as http.AgentOptions);
    this.httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 256, lookup } as https.AgentOptions);
  }

  /** Throws 400 url_not_allowed when the URL may not be fetched (scheme, host, resolved address). */
  async assertAllowedUrl(url: string): Promise<void> {
    const parsed = this.checkUrl(url);
    if (this.config.allowPrivateNetworkFetch) return;
    const host = parsed.hostname.replace(/^\[|\]$/g, '');
    let addresses: LookupAddress[];
    try {
      addresses = await new Promise<LookupAddress[]>((resolve, reject) =>
        dnsLookup(host, { all: true }, (err, list) => (err ? reject(err) : resolve(list))));
    } catch {
      throw UrlNotAllowed(`The host "${parsed.hostname}" does not resolve`, [{ path: '/url', message: 'host does not resolve' }]);
    }
    for (const { address } of addresses) {
      const reason = refusedAddressReason(address);
      if (reason) {
        // The address itself stays in the server's log: telling the client would map internal DNS names.
        this.logger.warn({ host: parsed.hostname, address, reason }, 'outbound URL refused');
        throw refused(parsed.hostname, `resolves to an address that ${reason}`);
      }
    }
  }

  async fetch(url: string, options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
    const started = Date.now();
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const maxRedirects = options.maxRedirects ?? 0;
    const deadline = started + timeoutMs;
    let current = url;
    let method = (options.method ?? 'GET').toUpperCase();
    let body = options.body;
    for (let hop = 0; ; hop++) {
      const target = this.checkUrl(current);
      const response = await this.once(target, method, options.headers ?? {}, body, Math.max(1, deadline - Date.now()), options.maxBytes ?? DEFAULT_MAX_BYTES, options.signal, timeoutMs);
      const location = response.headers.location;
      if (REDIRECTS.has(response.status) && location && hop < maxRedirects) {
        current = new URL(location, target).toString();
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return { ...response, url: target.toString(), durationMs: Date.now() - started };
    }
  }

  /** Closes kept-alive sockets. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }

  /** Scheme and host checks that need no DNS; returns the parsed URL. */
  private checkUrl(url: string): URL {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw UrlNotAllowed('The URL is not valid', [{ path: '/url', message: 'is not a valid URL' }]);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw UrlNotAllowed(`The scheme ${parsed.protocol} is not allowed; use http or https`, [{ path: '/url', message: 'scheme must be http or https' }]);
    }
    if (parsed.username || parsed.password) {
      throw UrlNotAllowed('URLs with credentials are not allowed', [{ path: '/url', message: 'must not contain credentials' }]);
    }
    if (!this.config.allowPrivateNetworkFetch) {
      const reason = refusedHostReason(parsed.hostname);
      if (reason) throw refused(parsed.hostname, reason);
    }
    return parsed;
  }

  /** dns.lookup that refuses any disallowed address, used by the agents for every connection. */
  private guardedLookup(): LookupFunction {
    const allowAll = this.config.allowPrivateNetworkFetch;
    return ((hostname: string, options: LookupOptions, callback: (...args: any[]) => void) => {
      dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err);
        if (!allowAll) {
          for (const { address } of addresses) {
            const reason = refusedAddressReason(address);
            if (reason) {
              this.logger.warn({ host: hostname, address, reason }, 'outbound connection refused');
              return callback(new RefusedAddress(`The host "${hostname}" resolves to an address that ${reason}`));
            }
          }
        }
        if (options.all) return callback(null, addresses);
        const first = addresses[0];
        return callback(null, first.address, first.family);
      });
    }) as LookupFunction;
  }

  private once(
    target: URL, method: string, headers: Record<string, string>, body: string | Buffer | undefined,
    timeoutMs: number, maxBytes: number, signal?: AbortSignal, totalMs = timeoutMs,
  ): Promise<Omit<SafeFetchResponse, 'url' | 'durationMs'>> {
    const isHttps = target.protocol === 'https:';
    const transport = isHttps ? https : http;
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (err: Error | null, value?: Omit<SafeFetchResponse, 'url' | 'durationMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve(value!);
      };
      const requestHeaders: Record<string, string | number> = { 'User-Agent': 'headless-platform/1', ...headers };
      if (body !== undefined) requestHeaders['Content-Length'] = Buffer.byteLength(body);
      const req = transport.request(target, {
        method,
        headers: requestHeaders,
        agent: isHttps ? this.httpsAgent : this.httpAgent,
        lookup: this.guardedLookup(),
      } as http.RequestOptions, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const done = () => finish(null, {
          status: res.statusCode ?? 0,
          headers: flattenHeaders(res.headers),
          body: Buffer.concat(chunks),
          truncated,
        });
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          const room = maxBytes - size;
          if (chunk.length > room) {
            chunks.push(chunk.subarray(0, room));
            truncated = true;
            res.destroy();
            done();
            return;
          }
          chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', done);
        res.on('error', (err) => finish(new FetchError('network', err.message, { cause: err })));
        res.on('close', () => { if (!res.complete && !truncated) finish(new FetchError('network', 'The connection closed before the response ended')); });
      });
      const timer = setTimeout(() => {
        // The whole request's time limit (redirects included), not what was left of it for this hop.
        req.destroy(new FetchError('timeout', `No complete answer within ${totalMs} ms`));
      }, timeoutMs);
      const onAbort = () => req.destroy(new FetchError('aborted', 'The request was aborted'));
      if (signal?.aborted) onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => {
        if (err instanceof FetchError) return finish(err);
        if (err instanceof RefusedAddress) return finish(UrlNotAllowed(err.message, [{ path: '/url', message: err.message }]));
        const code = (err as NodeJS.ErrnoException).code;
        return finish(new FetchError('network', `${code ?? 'error'}: ${err.message}`, { cause: err }));
      });
      if (body !== undefined) req.end(body);
      else req.end();
    });
  }
}

function refused(host: string, reason: string) {
  return UrlNotAllowed(`The host "${host}" ${reason}`, [{ path: '/url', message: `host ${reason}` }]);
}

function flattenHeaders(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

import type { Config } from '../../config/index.js';
import type { Logger } from 'pino';

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

/**
 * The one outbound HTTP client of the product (connectors, imports, ingestion, LLM calls).
 * Refuses loopback, private, link-local, CGNAT, multicast and metadata addresses after DNS resolution
 * and on every redirect hop, unless ALLOW_PRIVATE_NETWORK_FETCH=true. Built by the events issue (#3).
 */
export class FetchService {
  constructor(readonly config: Config, readonly logger: Logger) {}

  /** Throws 400 url_not_allowed when the URL may not be fetched (scheme, host, resolved address). */
  async assertAllowedUrl(_url: string): Promise<void> {
    throw new Error('FetchService.assertAllowedUrl is built by the events issue (#3)');
  }

  async fetch(_url: string, _options: SafeFetchOptions = {}): Promise<SafeFetchResponse> {
    throw new Error('FetchService.fetch is built by the events issue (#3)');
  }
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The raw body, exactly as received (for signature checks). */
  body: string;
  receivedAt: number;
}

export type Responder = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

/**
 * A real HTTP server on loopback: records every request and answers through a replaceable responder
 * (200 by default). Serves webhooks, imported sites, JWKS and LLM endpoints in tests.
 */
export class HttpReceiver {
  readonly requests: ReceivedRequest[] = [];
  port = 0;
  responder: Responder = (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"ok":true}');
  };

  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = this.port): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const received: ReceivedRequest = {
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          receivedAt: Date.now(),
        };
        this.requests.push(received);
        Promise.resolve(this.responder(received, res)).catch(() => {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Answers with fixed pages: `{ '/': '<html>…', '/robots.txt': 'User-agent: *' }` (404 elsewhere). */
  serve(pages: Record<string, string | { status?: number; type?: string; body: string; headers?: Record<string, string> }>): this {
    this.responder = (req, res) => {
      const path = req.path.split('?')[0];
      const page = pages[path];
      if (page === undefined) {
        res.writeHead(404, { 'Content-Type': 'text/plain' });
        res.end('not found');
        return;
      }
      const p = typeof page === 'string' ? { body: page } : page;
      const type = p.type ?? (path.endsWith('.txt') ? 'text/plain' : path.endsWith('.json') ? 'application/json' : 'text/html; charset=utf-8');
      res.writeHead(p.status ?? 200, { 'Content-Type': type, ...p.headers });
      res.end(p.body);
    };
    return this;
  }

  /** Waits until `count` requests arrived (or throws after timeoutMs). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.requests.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} requests, got ${this.requests.length}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.requests;
  }
}

export async function startReceiver(): Promise<HttpReceiver> {
  return new HttpReceiver().start();
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the stand-in answered (or refused), as it came. */
export interface StripeCall {
  method: string;
  path: string;
  idempotencyKey: string | null;
  params: Record<string, string>;
}

/**
 * A loopback stand-in for the HTTP endpoints of Stripe's API that the official `stripe` package calls for
 * payments (PaymentIntents create, retrieve and cancel; Refunds create): form-encoded requests, Stripe's JSON
 * objects and error envelope, and Idempotency-Key replay as Stripe does it (the same key answers the first
 * answer again). `failNext(n)` answers the next n calls with an error (`failure`: 500 api_error unless set), `down`
 * answers every call so, `silent` answers none (the request stays open: the package's timeout ends it).
 * `refundStatus` is the status of the refunds it makes (Stripe's `succeeded` unless set).
 */
export class StripeStandIn {
  readonly calls: StripeCall[] = [];
  readonly intents = new Map<string, Record<string, unknown>>();
  readonly refunds = new Map<string, Record<string, unknown>>();
  down = false;
  silent = false;
  failure: { status: number; type: string; code?: string; message: string } = { status: 500, type: 'api_error', message: 'The stand-in is down' };
  refundStatus = 'succeeded';
  private failing = 0;
  private readonly held: ServerResponse[] = [];
  private counter = 0;
  private readonly replies = new Map<string, { status: number; body: string }>();

  private constructor(private readonly server: Server, readonly origin: string) {}

  static async start(): Promise<StripeStandIn> {
    const handlers: Array<(req: IncomingMessage, res: ServerResponse) => void> = [];
    const server = createServer((req, res) => handlers[0](req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const standIn = new StripeStandIn(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    handlers.push((req, res) => void standIn.handle(req, res));
    return standIn;
  }

  failNext(n: number): void {
    this.failing = n;
  }

  async stop(): Promise<void> {
    for (const res of this.held.splice(0)) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let text = '';
    for await (const chunk of req) text += String(chunk);
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const params = Object.fromEntries(new URLSearchParams(req.method === 'GET' ? url.search : text));
    const idempotencyKey = (req.headers['idempotency-key'] as string | undefined) ?? null;
    this.calls.push({ method: req.method ?? 'GET', path: url.pathname, idempotencyKey, params });
    const send = (status: number, body: unknown) => {
      const json = JSON.stringify(body);
      if (idempotencyKey && status < 500) this.replies.set(`${req.method} ${url.pathname} ${idempotencyKey}`, { status, body: json });
      res.writeHead(status, { 'Content-Type': 'application/json', 'Request-Id': `req_${++this.counter}` }).end(json);
    };
    if (this.silent) {
      this.held.push(res);
      return;
    }
    if (this.down || this.failing > 0) {
      if (this.failing > 0) this.failing -= 1;
      const { status, ...error } = this.failure;
      res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify({ error }));
      return;
    }
    const kept = idempotencyKey ? this.replies.get(`${req.method} ${url.pathname} ${idempotencyKey}`) : undefined;
    if (kept) {
      res.writeHead(kept.status, { 'Content-Type': 'application/json', 'Idempotent-Replayed': 'true' }).end(kept.body);
      return;
    }
    const intentPath = /^\/v1\/payment_intents\/([^/]+)(\/cancel)?$/.exec(url.pathname);
    const metadata = Object.fromEntries(Object.entries(params).flatMap(([k, v]) => (k.startsWith('metadata[') ? [[k.slice(9, -1), v]] : [])));
    if (req.method === 'POST' && url.pathname === '/v1/payment_intents') {
      const id = `pi_${++this.counter}${Math.random().toString(36).slice(2, 10)}`;
      const intent = {
        id, object: 'payment_intent', amount: Number(params.amount), amount_received: 0, currency: params.currency,
        client_secret: `${id}_secret_${Math.random().toString(36).slice(2, 12)}`, status: 'requires_payment_method',
        payment_method_types: Object.entries(params).filter(([k]) => k.startsWith('payment_method_types')).map(([, v]) => v), metadata,
        created: Math.floor(Date.now() / 1000), livemode: false,
      };
      this.intents.set(id, intent);
      send(200, intent);
    } else if (intentPath && this.intents.has(intentPath[1])) {
      const intent = this.intents.get(intentPath[1])!;
      if (req.method === 'POST' && intentPath[2]) intent.status = 'canceled';
      send(200, intent);
    } else if (req.method === 'POST' && url.pathname === '/v1/refunds') {
      const id = `re_${++this.counter}`;
      const refund = {
        id, object: 'refund', amount: Number(params.amount), payment_intent: params.payment_intent, status: this.refundStatus, currency: 'eur',
        reason: params.reason ?? null, metadata, created: Math.floor(Date.now() / 1000),
      };
      this.refunds.set(id, refund);
      send(200, refund);
    } else {
      send(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such resource: ${url.pathname}` } });
    }
  }
}

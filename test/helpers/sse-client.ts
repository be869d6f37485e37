import { request, type IncomingMessage } from 'node:http';

export interface SseEvent {
  event: string;
  id: string;
  data: string;
}

/**
 * A Server-Sent Events client over node:http, as a browser's EventSource reads a stream: frames split on
 * blank lines, `event:`, `id:`, `data:` fields, comment lines kept apart. `pause()` stops reading the
 * socket (a slow client), `resume()` reads on.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: string[] = [];
  status = 0;
  private response: IncomingMessage | null = null;
  private buffer = '';
  private ended = false;
  private waiters: Array<() => void> = [];

  private constructor(private readonly destroy: () => void) {}

  /** Opens the stream and resolves once the response headers arrived. */
  static open(url: string, headers: Record<string, string>): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { Accept: 'text/event-stream', ...headers } }, (res) => {
        client.response = res;
        client.status = res.statusCode ?? 0;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.take(chunk));
        res.on('end', () => { client.ended = true; client.notify(); });
        res.on('error', () => { client.ended = true; client.notify(); });
        resolve(client);
      });
      const client = new SseClient(() => req.destroy());
      req.on('error', reject);
      req.end();
    });
  }

  /** The body, for a stream that answered with an error instead. */
  async text(): Promise<string> {
    await this.until(() => this.ended, 5000);
    return this.buffer;
  }

  get closed(): boolean {
    return this.ended;
  }

  pause(): void {
    this.response?.pause();
  }

  resume(): void {
    this.response?.resume();
  }

  close(): void {
    this.destroy();
  }

  /** Waits until `check` holds (checked after every frame), or fails after `timeoutMs`. */
  async until(check: () => boolean, timeoutMs = 5000, what = 'the stream'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${this.events.length} events, ${this.comments.length} comments`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
  }

  waitForEvents(count: number, timeoutMs = 5000): Promise<void> {
    return this.until(() => this.events.length >= count, timeoutMs, `${count} events`);
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    if (this.status !== 200) return;
    let at: number;
    while ((at = this.buffer.indexOf('\n\n')) >= 0) {
      const frame = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + 2);
      const fields: Record<string, string> = {};
      for (const line of frame.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else {
          const colon = line.indexOf(':');
          if (colon > 0) fields[line.slice(0, colon)] = (fields[line.slice(0, colon)] ? `${fields[line.slice(0, colon)]}\n` : '') + line.slice(colon + 1).replace(/^ /, '');
        }
      }
      if (fields.data !== undefined) this.events.push({ event: fields.event ?? 'message', id: fields.id ?? '', data: fields.data });
    }
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

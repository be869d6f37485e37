import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw RFC 5322 message (headers and body). */
  raw: string;
}

/**
 * A real SMTP server on loopback that keeps what it receives. `stop()` then `start()` brings it back on
 * the same port, to test an outage. `rejectWith` makes it refuse messages with that reply.
 */
export class TestSmtpServer {
  readonly messages: ReceivedMail[] = [];
  port = 0;
  rejectWith: string | null = null;
  private server: SMTPServer | null = null;

  async start(port = this.port): Promise<this> {
    const server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onAuth: (_auth, _session, callback) => callback(null, { user: 'test' }),
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          if (this.rejectWith) {
            const err = Object.assign(new Error(this.rejectWith), { responseCode: 550 });
            return callback(err);
          }
          this.messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Waits until `count` messages arrived (or throws after timeoutMs). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} mails, got ${this.messages.length}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.messages;
  }
}

export async function startSmtpServer(): Promise<TestSmtpServer> {
  return new TestSmtpServer().start();
}

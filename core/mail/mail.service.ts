import type { RequestContext } from '../base/request-context.js';
import type { SettingsProvider, SmtpSettings } from './settings-provider.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** What the mail is about, for logs and the delivery record, e.g. `invitation:<id>`. */
  reference?: string;
}

export interface SendResult {
  messageId: string;
}

/**
 * Mail through nodemailer with the platform SMTP settings. `send` delivers now (the SMTP test and the
 * dispatcher use it); `enqueue` is how packs send: a mail job in the caller's transaction, made durable by
 * the outbox (core/events/mail-queue.ts), which installs itself with `useQueue` when the app is built.
 */
export class MailService {
  private enqueueImpl: ((rc: RequestContext, message: MailMessage) => Promise<'sent' | 'queued'>) | null = null;

  constructor(private readonly settings: SettingsProvider) {}

  /** Lets the outbox take over queued mail. */
  useQueue(enqueue: (rc: RequestContext, message: MailMessage) => Promise<'sent' | 'queued'>): void {
    this.enqueueImpl = enqueue;
  }

  async enqueue(rc: RequestContext, message: MailMessage): Promise<'sent' | 'queued'> {
    if (!this.enqueueImpl) throw new Error('No mail queue is installed: the outbox installs it when the app is built');
    return this.enqueueImpl(rc, message);
  }

  async send(message: MailMessage, override?: SmtpSettings): Promise<SendResult> {
    const smtp = override ?? (await this.settings.getSmtp());
    if (!smtp.host) throw new Error('SMTP is not configured (SMTP_HOST)');
    // nodemailer loads with the first mail sent, not with the service.
    const { default: nodemailer } = await import('nodemailer');
    const transport = nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port ?? (smtp.secure ? 465 : 587),
      secure: smtp.secure ?? false,
      auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? '' } : undefined,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 20_000,
    });
    try {
      const info = await transport.sendMail({
        from: smtp.from ?? 'no-reply@localhost',
        to: message.to,
        subject: message.subject,
        text: message.text,
        html: message.html,
      });
      return { messageId: String(info.messageId) };
    } finally {
      transport.close();
    }
  }
}

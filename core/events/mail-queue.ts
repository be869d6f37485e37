import type { Database } from '../db/database.js';
import { newId, nowIso } from '../db/ids.js';
import type { RequestContext } from '../kernel/request-context.js';
import type { MailMessage } from '../mail/mail.service.js';
import type { DeliveriesRepository } from './deliveries.repository.js';

/**
 * `mail.enqueue` made durable: the message becomes a mail job in the outbox, in the caller's transaction,
 * and the dispatcher sends it after commit (retrying while SMTP is down). Always answers 'queued'.
 */
export function mailQueue(db: Database, deliveries: DeliveriesRepository, poke: () => void) {
  return async function enqueueMail(rc: RequestContext, message: MailMessage): Promise<'queued'> {
    await db.transaction(rc, async (rc) => {
      await deliveries.insertMail(rc, newId(), message, nowIso());
      rc.afterCommit!(poke);
    });
    return 'queued';
  };
}

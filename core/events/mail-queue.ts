import type { Database } from '../db/database.js';
import { newId, nowIso } from '../base/ids.js';
import type { RequestContext } from '../base/request-context.js';
import type { MailMessage } from '../mail/mail.service.js';
import type { DeliveriesRepository } from './deliveries.repository.js';
import type { Dispatcher } from './dispatcher.js';
import type { MailSeal } from './mail-seal.js';

/**
 * `mail.enqueue` made durable: the message becomes a mail job in the outbox, in the caller's transaction.
 * Right after commit this process makes the first attempt (the request answers once the SMTP server took the
 * message or refused it, as before the outbox), so mail leaves in order; a failed attempt is retried by the
 * dispatcher while SMTP is down. Answers 'queued': the caller's transaction has not committed yet. The message
 * is sealed at rest (it carries addresses and invitation links).
 */
export function mailQueue(db: Database, deliveries: DeliveriesRepository, dispatcher: Dispatcher, seal: MailSeal) {
  return async function enqueueMail(rc: RequestContext, message: MailMessage): Promise<'queued'> {
    await db.transaction(rc, async (rc) => {
      const claim = dispatcher.claimForNow();
      const job = await deliveries.insertMail(rc, newId(), seal.seal(message), message.reference ?? null, nowIso(), claim ?? undefined);
      if (claim) rc.afterCommit!(() => dispatcher.sendClaimed(job));
    });
    return 'queued';
  };
}

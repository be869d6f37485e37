import { SecretBox } from '../base/secret-box.js';
import type { MailMessage } from '../mail/mail.service.js';

/** A mail job's message as stored: sealed, or (jobs written before sealing) the message itself. */
export type StoredMail = { sealed: string } | MailMessage;

/**
 * Mail jobs hold invitation links (with their tokens) and recipients' addresses: the message is sealed at
 * rest with the secret box (AES-256-GCM, key from SETTINGS_ENCRYPTION_KEY) and opened when it is sent.
 */
export class MailSeal {
  private readonly box: SecretBox;

  constructor(settingsEncryptionKey: string) {
    this.box = new SecretBox(settingsEncryptionKey);
  }

  seal(message: MailMessage): StoredMail {
    return { sealed: this.box.seal(JSON.stringify(message), 'mail') };
  }

  open(stored: StoredMail): MailMessage {
    return 'sealed' in stored ? JSON.parse(this.box.open(stored.sealed, 'mail')) as MailMessage : stored;
  }
}

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets at rest with AES-256-GCM (platform settings, connector secrets, queued mail). The 256-bit key
 * is derived from SETTINGS_ENCRYPTION_KEY with HKDF-SHA256; `context` (a setting's name, `connector-secret`,
 * `mail`) is the additional authenticated data, so a sealed value cannot be moved to another use.
 * Sealed form: `v1:<base64(iv | tag | ciphertext)>`.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (secret.length < 16) throw new Error('SecretBox: the encryption secret is too short');
    this.key = Buffer.from(hkdfSync('sha256', secret, 'headless-platform', 'secret-box:v1', 32));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  open(sealed: string, context: string): string {
    const [version, encoded] = sealed.split(':', 2);
    if (version !== VERSION || !encoded) throw new Error('SecretBox: unknown sealed format');
    const raw = Buffer.from(encoded, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

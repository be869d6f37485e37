import { createHmac } from 'node:crypto';

/** The signature headers of one delivery attempt. */
export interface SignatureHeaders {
  'X-Platform-Signature': string;
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/**
 * Signs a delivery body twice with the same secret:
 * - `X-Platform-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`;
 * - Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>` where the key is
 *   the secret's UTF-8 bytes, so receivers verify with `whsec_<base64 of those bytes>`.
 */
export function signDelivery(secret: string, messageId: string, body: string, unixSeconds: number): SignatureHeaders {
  const t = String(unixSeconds);
  const platform = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
  const standard = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${messageId}.${t}.${body}`).digest('base64');
  return {
    'X-Platform-Signature': `t=${t},v1=${platform}`,
    'webhook-id': messageId,
    'webhook-timestamp': t,
    'webhook-signature': `v1,${standard}`,
  };
}

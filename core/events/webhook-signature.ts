import { createHmac } from 'node:crypto';
import type { PlatformEvent } from './event.js';

/** The JSON body a connector receives for an event (what the signatures sign). */
export function webhookBody(event: PlatformEvent): string {
  return JSON.stringify({
    id: event.id, event: event.name, tenantId: event.tenantId, product: event.product, occurredAt: event.occurredAt, payload: event.payload,
  });
}

/** The headers of a delivery besides the signatures: the body's type, the event's name and the delivery's id. */
export function deliveryHeaders(eventName: string, deliveryId: string): Record<string, string> {
  return { 'Content-Type': 'application/json', 'X-Platform-Event': eventName, 'X-Platform-Delivery': deliveryId };
}

/** The names of the signature headers each attempt carries (signDelivery), signed anew at every attempt. */
export const SIGNATURE_HEADER_NAMES = ['X-Platform-Signature', 'webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

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

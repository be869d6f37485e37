import type { StoredMail } from './mail-seal.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';
export type DeliveryKind = 'webhook' | 'mail' | 'handler';

/** One entry of the outbox queue: a webhook delivery to a connector, a mail job, or a run of a pack's event handler. */
export interface Delivery {
  tenantId: string;
  id: string;
  kind: DeliveryKind;
  connectorId: string | null;
  /** A handler run's subscription, `<pack>:<pattern>` (kind `handler`). */
  handler: string | null;
  eventId: string | null;
  event: string | null;
  /** A mail job's message, sealed (see mail-seal.ts). */
  message: StoredMail | null;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One attempt of a delivery, in the delivery log. */
export interface DeliveryAttempt {
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  at: string;
  /** The receiver's answer headers (names in lower case), null without an answer (or for mail and handlers). */
  responseHeaders: Record<string, string> | null;
  /** The first KiB (1,024 bytes) of the answer's body, as UTF-8 text; null without an answer. */
  responseBody: string | null;
}

/** How much of an answer's body an attempt keeps. */
export const KEPT_RESPONSE_BYTES = 1024;

/** What the dispatcher records after an attempt. */
export interface AttemptOutcome {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The delivery's new state. */
  status: DeliveryStatus;
  nextAttemptAt: string;
  at: string;
  /** A webhook's answer (its headers and the first KiB of its body). */
  response?: { headers: Record<string, string>; body: string };
}

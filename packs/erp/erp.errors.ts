import { defineError } from '../../core/pack-api.js';

/** The error codes of ERP's commerce (CONTRACT 11.1, 11.2). */
export const InsufficientStock = defineError('insufficient_stock', 409, (m: string) => m);
/** A webhook whose signature does not hold (CONTRACT 15.3). */
export const InvalidSignature = defineError('invalid_signature', 400, (m: string) => m);
export const PriceChanged = defineError('price_changed', 409, (m: string | void) => m || 'A price changed since the client read it');
/** A refund beyond what is left of the payments (CONTRACT 15.4). */
export const RefundExceedsPayment = defineError('refund_exceeds_payment', 409, (m: string) => m);

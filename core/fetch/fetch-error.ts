/** A failed outbound request: no answer (network), too slow (timeout) or cancelled (aborted). */
export class FetchError extends Error {
  constructor(readonly kind: 'network' | 'timeout' | 'aborted', message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FetchError';
  }
}

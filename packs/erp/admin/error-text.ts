import { isApiError } from '../../../admin/src/pack-kit.js';

/** The contract's error as a person reads it beside the action that failed: its message, the failing paths, and its code. */
export const errorText = (err: unknown): string => {
  if (!isApiError(err)) throw err;
  const where = err.issues.filter((i) => i.path).map((i) => `${i.path}: ${i.message}`).join('; ');
  return `${err.message}${where ? ` (${where})` : ''} [${err.code}]`;
};

import { NotFound } from '../../core/pack-api.js';

const customerRefParam = /^[^@]{1,128}$/;

/** A customerRef from a path: 1..128 characters, never an address (404 otherwise, as for an unknown customer). */
export function customerRefParamOf(value: string): string {
  if (!customerRefParam.test(value)) throw NotFound('No such customer reference');
  return value;
}

import type { ValidateFunction } from 'ajv';
import { createAjv } from '../../core/pack-api.js';

export interface FormField {
  name: string;
  label?: string;
  type: 'text' | 'email' | 'textarea' | 'number' | 'checkbox' | 'select';
  required?: boolean;
  options?: string[];
}

/** The honeypot: a field a visitor never sees; a bot that fills it is answered 201 and ignored. */
export const HONEYPOT_FIELD = '_hp';

/** A form's fields as a JSON Schema for a submission (unknown fields refused). */
export function formJsonSchema(fields: FormField[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const field of fields) {
    properties[field.name] = fieldSchema(field);
    if (field.required) required.push(field.name);
  }
  return { type: 'object', additionalProperties: false, properties, required };
}

function fieldSchema(field: FormField): Record<string, unknown> {
  switch (field.type) {
    case 'email': return { type: 'string', format: 'email', maxLength: 254 };
    case 'textarea': return { type: 'string', maxLength: 20000, ...(field.required ? { minLength: 1 } : {}) };
    case 'number': return { type: 'number' };
    case 'checkbox': return field.required ? { type: 'boolean', const: true } : { type: 'boolean' };
    case 'select': return { type: 'string', enum: field.options?.length ? field.options : [''] };
    default: return { type: 'string', maxLength: 2000, ...(field.required ? { minLength: 1 } : {}) };
  }
}

const ajv = createAjv();
const cache = new Map<string, ValidateFunction>();
const CACHE_SIZE = 500;

/** The compiled validator of one version of a form (compiled once, kept in a bounded cache). */
export function formValidator(formId: string, version: number, fields: FormField[]): ValidateFunction {
  const key = `${formId}@${version}`;
  let validate = cache.get(key);
  if (!validate) {
    validate = ajv.compile(formJsonSchema(fields));
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
    cache.set(key, validate);
  }
  return validate;
}

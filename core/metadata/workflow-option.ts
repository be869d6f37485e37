import { ValidationFailed, type ErrorDetail } from '../base/errors.js';

/**
 * A schema's `workflow` registration key (CONTRACT.md 17): `drafts` gives its records a draft beside the live
 * version (core/workflow/); `locales` localised fields (17.2). `fields`, beyond the contract: the top-level
 * properties a draft may change (default: all); a draft that changes any other answers 400 at its path, and the
 * other fields follow the live record (erp.product: never its stock).
 */
export interface WorkflowOption {
  drafts?: boolean;
  locales?: boolean;
  fields?: string[];
}

/** The JSON Schema of the key, for the registration body and the schema item. */
export const workflowOptionSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    drafts: { type: 'boolean' },
    locales: { type: 'boolean' },
    fields: { type: 'array', items: { type: 'string' }, maxItems: 200 },
  },
} as const;

/** The key checked (400 validation_failed at `/workflow/...`), or null when absent. */
export function checkWorkflowOption(value: unknown, properties: Record<string, unknown>): WorkflowOption | null {
  if (value === undefined || value === null) return null;
  const issues: ErrorDetail[] = [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    issues.push({ path: '/workflow', message: 'must be object' });
  } else {
    for (const [key, v] of Object.entries(value)) {
      if (key === 'drafts' || key === 'locales') {
        if (typeof v !== 'boolean') issues.push({ path: `/workflow/${key}`, message: 'must be boolean' });
      } else if (key === 'fields') {
        if (!Array.isArray(v)) issues.push({ path: '/workflow/fields', message: 'must be array' });
        else v.forEach((f, i) => { if (typeof f !== 'string' || !Object.hasOwn(properties, f)) issues.push({ path: `/workflow/fields/${i}`, message: 'must name a property of the schema' }); });
      } else {
        issues.push({ path: `/workflow/${key}`, message: 'is not a workflow option' });
      }
    }
  }
  if (issues.length) throw ValidationFailed('Invalid workflow', issues);
  return value as WorkflowOption;
}

/** Whether a schema's records have drafts. */
export function hasDrafts(workflow: WorkflowOption | null | undefined): boolean {
  return workflow?.drafts === true;
}

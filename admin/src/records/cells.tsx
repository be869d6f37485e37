import type { ReactElement } from 'react';
import { NumberInput, SelectArrayInput, SelectInput, TextInput } from 'react-admin';
import type { JsonSchema } from '../api/schemas.js';
import { formatBasisPoints, formatMoney } from './amounts.js';
import { AmountInput } from './AmountInput.js';
import { choices, isBasisPoints, isMoney, isScalar, labelOf, typeOf } from './json-schema.js';

/**
 * What a records table needs from a JSON Schema: the text of its cells and its filters. Kept apart from the
 * forms (schema-inputs.tsx), which are loaded on demand.
 */

const numbers = new Intl.NumberFormat();
const dates = new Intl.DateTimeFormat(undefined, { dateStyle: 'short' });
const dateTimes = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'medium' });
const formatWith = (format: Intl.DateTimeFormat) => (value: unknown): string => {
  if (value === undefined || value === null || value === '') return '';
  const date = new Date(String(value));
  return Number.isNaN(date.getTime()) ? String(value) : format.format(date);
};
export const formatDateTime = formatWith(dateTimes);
const formatDate = formatWith(dates);

/**
 * A table cell's text for a property: a plain function of the record (the table renders hundreds of cells a
 * page turn, so no field component per cell), with formatters made once.
 */
export function cellFor(name: string, s: JsonSchema): (record: Record<string, unknown>) => string {
  const type = typeOf(s);
  if (isMoney(s)) return (r) => formatMoney(r[name], r.currency);
  if (isBasisPoints(s)) return (r) => formatBasisPoints(r[name]);
  if (type === 'boolean') return (r) => (r[name] === true ? 'yes' : r[name] === false ? 'no' : '');
  if (type === 'integer' || type === 'number') return (r) => (typeof r[name] === 'number' ? numbers.format(r[name] as number) : '');
  if (type === 'string' && s.format === 'date-time') return (r) => formatDateTime(r[name]);
  if (type === 'string' && s.format === 'date') return (r) => formatDate(r[name]);
  if (isScalar(s)) return (r) => {
    const value = r[name];
    if (value === undefined || value === null) return '';
    const text = String(value);
    return text.length > 80 ? `${text.slice(0, 79)}…` : text;
  };
  return (r) => summary(r[name]);
}

export function summary(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

const OP_LABEL: Record<string, string> = { ne: '≠', gt: '>', gte: '≥', lt: '<', lte: '≤', like: 'like (% wildcard)', in: 'in', exists: 'exists' };

/** Filters per property with the query language's operators: `field` (eq) and `field|op`. */
export function filtersFor(properties: Record<string, JsonSchema>): ReactElement[] {
  const filters: ReactElement[] = [];
  for (const [name, s] of Object.entries(properties)) {
    if (!isScalar(s)) continue;
    const label = labelOf(name, s);
    const type = typeOf(s);
    const at = (op: string) => `${label} ${OP_LABEL[op]}`;
    if (s.enum) {
      filters.push(<SelectInput key={name} source={name} label={label} choices={choices(s.enum)} />);
      filters.push(<SelectArrayInput key={`${name}|in`} source={`${name}|in`} label={at('in')} choices={choices(s.enum)} />);
    } else if (type === 'boolean') {
      filters.push(<SelectInput key={name} source={name} label={label} choices={[{ id: 'true', name: 'yes' }, { id: 'false', name: 'no' }]} />);
    } else if (isMoney(s) || isBasisPoints(s)) {
      // Filters have no record: money in the default currency's units (the stored value is cents either way).
      const kind = isMoney(s) ? 'money' : 'percent';
      filters.push(<AmountInput key={name} source={name} label={label} kind={kind} />);
      for (const op of ['gte', 'lte', 'gt', 'lt', 'ne']) filters.push(<AmountInput key={`${name}|${op}`} source={`${name}|${op}`} label={at(op)} kind={kind} />);
    } else if (type === 'integer' || type === 'number') {
      filters.push(<NumberInput key={name} source={name} label={label} />);
      for (const op of ['gte', 'lte', 'gt', 'lt', 'ne']) filters.push(<NumberInput key={`${name}|${op}`} source={`${name}|${op}`} label={at(op)} />);
    } else {
      filters.push(<TextInput key={name} source={name} label={label} />);
      filters.push(<TextInput key={`${name}|like`} source={`${name}|like`} label={at('like')} />);
      filters.push(<TextInput key={`${name}|ne`} source={`${name}|ne`} label={at('ne')} />);
    }
  }
  return filters;
}

import { lazy, Suspense, type ReactElement } from 'react';
import {
  ArrayInput, AutocompleteArrayInput, AutocompleteInput, BooleanField, BooleanInput, DateField, DateInput, DateTimeInput, FunctionField, NumberField, NumberInput,
  ReferenceArrayField, ReferenceArrayInput, ReferenceField, ReferenceInput, SelectArrayInput, SelectInput, SimpleFormIterator, TextField, TextInput,
  required, type Validator,
} from 'react-admin';
import { Box, Typography } from '@mui/material';
import { findSchema, type JsonSchema } from '../api/schemas.js';
import { inputFor as packInputFor } from '../packs/pack-screens.js';
import { formatBasisPoints, formatMoney } from './amounts.js';
import { AmountInput } from './AmountInput.js';
import { summary } from './cells.js';
import { storageKeyOf, StorageKeysField, StorageKeysInput } from './StorageKeys.js';
import { choices, isBasisPoints, isMoney, isScalar, labelOf, typeOf } from './json-schema.js';
import { displayField } from './Records.js';

/**
 * JSON Schema → react-admin fields, inputs and filters: a small mapping, not a form engine. The form only
 * checks `required` itself; every other rule (limits, patterns, formats) is judged by the server, whose
 * errors appear at their field.
 */

const MarkdownInput = lazy(() => import('../content/MarkdownInput.js'));

/** Long text: Markdown for content (`contentMediaType: text/markdown`, or a field a pack declares Markdown in its namespace). */
const isMarkdown = (name: string, s: JsonSchema, ns: string) => s.contentMediaType === 'text/markdown' || packInputFor(ns, name) === 'markdown';

/** The schema (`ns.name`) a property refers to (`x-ref` on a string, or on the items of an array), when the console knows it. */
function referenceOf(s: JsonSchema): { target: string; many: boolean } | null {
  const one = typeof s['x-ref'] === 'string' ? (s['x-ref'] as string) : null;
  const many = typeOf(s) === 'array' && typeof s.items?.['x-ref'] === 'string' ? (s.items['x-ref'] as string) : null;
  const target = one ?? many;
  return target && findSchema(target) ? { target, many: !one } : null;
}

/** The referenced schema's display field (what a picker shows and searches), else the id. */
const shownField = (target: string) => {
  const schema = findSchema(target);
  return (schema && displayField(schema)) || 'id';
};

/** A picker of the referenced records, by their display field, searched as the user types. */
function referenceInput(ref: { target: string; many: boolean }, common: Record<string, any>): ReactElement {
  const { key, source, label, id, validate, helperText } = common;
  const field = shownField(ref.target);
  const search = (q: string) => (q && field !== 'id' ? { [`${field}|contains`]: q } : {});
  if (ref.many) {
    return (
      <ReferenceArrayInput key={key} source={source} reference={ref.target}>
        <AutocompleteArrayInput id={id} label={label} validate={validate} helperText={helperText} optionText={field} filterToQuery={search} />
      </ReferenceArrayInput>
    );
  }
  return (
    <ReferenceInput key={key} source={source} reference={ref.target}>
      <AutocompleteInput id={id} label={label} validate={validate} helperText={helperText} optionText={field} filterToQuery={search} />
    </ReferenceInput>
  );
}

export function inputFor(name: string, s: JsonSchema, ns: string, source = name, isRequired = false, inIterator = false): ReactElement {
  const label = labelOf(name, s);
  const validate: Validator[] = isRequired ? [required()] : [];
  const common = { key: source || name, source, label, ...(inIterator ? {} : { id: source }), validate, helperText: s.description ?? false, ...(s.default !== undefined && s.default !== '' ? { defaultValue: s.default } : {}) };
  const type = typeOf(s);
  const ref = inIterator ? null : referenceOf(s);
  if (ref) return referenceInput(ref, common);
  const files = inIterator ? null : storageKeyOf(s);
  if (files) return <StorageKeysInput key={common.key} source={source} label={label} id={source} helperText={s.description ?? false} {...files} />;
  if (s.enum) return <SelectInput {...common} choices={choices(s.enum)} emptyText="(none)" />;
  if (type === 'integer' && (isMoney(s) || isBasisPoints(s))) {
    return <AmountInput {...common} helperText={s.description} kind={isMoney(s) ? 'money' : 'percent'} />;
  }
  if (type === 'boolean') return <BooleanInput {...common} />;
  if (type === 'integer' || type === 'number') return <NumberInput {...common} step={type === 'integer' ? 1 : 'any'} />;
  if (type === 'string') {
    if (isMarkdown(name, s, ns)) return <Suspense key={source} fallback={<TextInput {...common} multiline />}><MarkdownInput {...common} /></Suspense>;
    if (s.format === 'date') return <DateInput {...common} />;
    if (s.format === 'date-time') return <DateTimeInput {...common} />;
    const long = (s.maxLength ?? 0) > 200 || ['description', 'notes', 'body', 'text', 'content', 'message'].includes(name);
    return <TextInput {...common} multiline={long} type={s.format === 'email' ? 'email' : 'text'} />;
  }
  if (type === 'array' && s.items) {
    const items = s.items;
    if (items.enum) return <SelectArrayInput {...common} choices={choices(items.enum)} />;
    if (typeOf(items) === 'object' && items.properties) {
      return (
        <ArrayInput {...common}>
          <SimpleFormIterator inline>
            {Object.entries(items.properties).map(([child, cs]) => inputFor(child, cs, ns, child, (items.required ?? []).includes(child), true))}
          </SimpleFormIterator>
        </ArrayInput>
      );
    }
    if (isScalar(items)) {
      return (
        <ArrayInput {...common}>
          <SimpleFormIterator inline disableReordering>
            {inputFor('value', items, ns, '', false, true)}
          </SimpleFormIterator>
        </ArrayInput>
      );
    }
  }
  if (type === 'object' && s.properties) {
    return (
      <Box key={source} component="fieldset" sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 1, mb: 1, width: '100%' }}>
        <Typography component="legend" variant="body2">{label}</Typography>
        {Object.entries(s.properties).map(([child, cs]) => inputFor(child, cs, ns, `${source}.${child}`, (s.required ?? []).includes(child), inIterator))}
      </Box>
    );
  }
  // Anything else (free objects, mixed types): JSON text.
  return (
    <TextInput
      {...common} multiline helperText="JSON"
      format={(v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2))}
      parse={(text: string) => { try { return text ? JSON.parse(text) : null; } catch { return text; } }}
    />
  );
}

export function fieldFor(name: string, s: JsonSchema): ReactElement {
  const label = labelOf(name, s);
  const type = typeOf(s);
  const ref = referenceOf(s);
  if (ref?.many) return <ReferenceArrayField key={name} source={name} reference={ref.target} label={label} />;
  if (ref) return <ReferenceField key={name} source={name} reference={ref.target} label={label} link="show" />;
  if (storageKeyOf(s)) return <StorageKeysField key={name} source={name} label={label} />;
  if (isMoney(s)) return <FunctionField key={name} source={name} label={label} render={(r: Record<string, unknown>) => formatMoney(r[name], r.currency)} />;
  if (isBasisPoints(s)) return <FunctionField key={name} source={name} label={label} render={(r: Record<string, unknown>) => formatBasisPoints(r[name])} />;
  if (type === 'boolean') return <BooleanField key={name} source={name} label={label} />;
  if (type === 'integer' || type === 'number') return <NumberField key={name} source={name} label={label} />;
  if (type === 'string' && (s.format === 'date-time' || s.format === 'date')) return <DateField key={name} source={name} label={label} showTime={s.format === 'date-time'} />;
  if (isScalar(s)) return <TextField key={name} source={name} label={label} sx={{ display: 'inline-block', maxWidth: 280, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }} />;
  return (
    <FunctionField
      key={name} source={name} label={label} sortable={false}
      render={(record: Record<string, unknown>) => summary(record[name])}
    />
  );
}


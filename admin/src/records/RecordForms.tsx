import { useState } from 'react';
import {
  Create, DeleteWithConfirmButton, Edit, SaveButton, Show, SimpleForm, SimpleShowLayout, Toolbar,
  useEditContext, useNotify, useRecordContext,
} from 'react-admin';
import { Alert, Box, Button, MenuItem, TextField, Typography } from '@mui/material';
import { useFormContext } from 'react-hook-form';
import type { SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { useApi } from '../common/hooks.js';
import { isLocalized } from './json-schema.js';
import { PackPanels } from '../packs/PackPanels.js';
import { formatDateTime } from './cells.js';
import { displayField, properties, resourceName, title, useSchema } from './Records.js';
import { Revisions } from './Revisions.js';
import { fieldFor, inputFor } from './schema-inputs.js';
import { DraftBar } from '../workflow/DraftBar.js';

/** A record's create and edit forms and its page, generated from its JSON Schema (loaded on demand). */

/** `translating`: a locale other than the default's, whose localised values may be left empty (they fall back). */
function RecordInputs({ schema, translating = false }: { schema: SchemaItem; translating?: boolean }) {
  const required = schema.schema.required ?? [];
  return <>{Object.entries(properties(schema)).map(([name, s]) => inputFor(name, s, schema.namespace, name, required.includes(name) && !(translating && isLocalized(s))))}</>;
}

interface SiteLocales { defaultLocale?: string; locales?: string[] }

/**
 * The locale a form of a localised schema edits (CONTRACT 17.2): the site's locales from its config. In another
 * locale than the default, the form shows and saves that locale's own values (`?locale=`); empty ones fall back.
 */
function LocaleSwitcher({ site, locale, onChange }: { site: SiteLocales; locale: string; onChange: (locale: string) => void }) {
  const locales = site.locales?.length ? site.locales : [site.defaultLocale ?? 'en'];
  return (
    <TextField
      select size="small" label="Locale" id="record-locale" value={locale} onChange={(e) => onChange(e.target.value)}
      helperText={locale === (site.defaultLocale ?? 'en') ? 'The default locale' : 'Empty fields show the default locale\'s values'}
      sx={{ mb: 2, minWidth: 200 }}
    >
      {locales.map((l) => <MenuItem key={l} value={l}>{l}{l === site.defaultLocale ? ' (default)' : ''}</MenuItem>)}
    </TextField>
  );
}

export function RecordCreate() {
  const schema = useSchema();
  if (!schema) return null;
  return (
    <Create title={`New ${title(schema)}`} redirect="list" mutationMode="pessimistic">
      <SimpleForm><RecordInputs schema={schema} /></SimpleForm>
    </Create>
  );
}

/** The page's title: the schema's and the record's display field (`x-display-field`), "Product: Oak desk". */
function RecordTitle({ schema }: { schema: SchemaItem }) {
  const record = useRecordContext();
  const field = displayField(schema);
  const shown = field && record ? record[field] : undefined;
  return <>{shown !== undefined && shown !== null && shown !== '' ? `${title(schema)}: ${String(shown)}` : title(schema)}</>;
}

/** The server's fields (id, version, times), quiet beside the form rather than at its top. */
function ServerFields() {
  const record = useRecordContext();
  if (!record) return null;
  const rows: Array<[string, string]> = [
    ['ID', String(record.id)], ['Version', String(record.version ?? '')],
    ['Created', formatDateTime(record.createdAt)], ['Updated', formatDateTime(record.updatedAt)],
  ];
  return (
    <Box component="aside" aria-label="Record details" data-testid="server-fields" sx={{ width: 260, flexShrink: 0, ml: 2, mt: 1, p: 2, border: 1, borderColor: 'divider', borderRadius: 1, alignSelf: 'flex-start' }}>
      <Typography variant="subtitle2" component="h2" sx={{ mb: 1 }}>Record details</Typography>
      <Box component="dl" sx={{ m: 0, '& dt': { typography: 'caption', color: 'text.secondary' }, '& dd': { typography: 'body2', m: 0, mb: 1, wordBreak: 'break-all' } }}>
        {rows.map(([label, value]) => <div key={label}><dt>{label}</dt><dd>{value}</dd></div>)}
      </Box>
    </Box>
  );
}

/** Shown when a save answered 412: the record changed since the form was loaded. */
function ConflictNotice({ onReloaded }: { onReloaded: () => void }) {
  const { refetch } = useEditContext();
  const form = useFormContext();
  return (
    <Alert
      severity="warning" role="alert" sx={{ mb: 2, width: '100%' }}
      action={<Button color="inherit" onClick={async () => {
        const result = await refetch();
        if (result?.data) form.reset(result.data);
        onReloaded();
      }}>Reload</Button>}
    >
      This record was changed by someone else since you opened it (412 version mismatch); your changes were not saved.
      Reload it to see the latest version, then apply your changes again.
    </Alert>
  );
}

export function RecordEdit() {
  const schema = useSchema();
  const notify = useNotify();
  const [conflict, setConflict] = useState(false);
  const localized = schema?.workflow?.locales === true;
  const site = useApi<SiteLocales>(localized && session.tenant ? `/tenants/${session.tenant}/site-config` : null).data;
  const [chosen, setLocale] = useState<string | null>(null);
  if (!schema) return null;
  const defaultLocale = site?.defaultLocale ?? 'en';
  const locale = chosen ?? defaultLocale;
  const meta = locale === defaultLocale ? undefined : { locale };
  return (
    <Edit
      key={locale} title={<RecordTitle schema={schema} />} aside={<ServerFields />} mutationMode="pessimistic" redirect="list"
      queryOptions={{ meta }}
      mutationOptions={{
        meta,
        onError: (error: any) => {
          if (error?.status === 412) setConflict(true);
          else notify(error?.message ?? 'The record was not saved', { type: 'error' });
        },
      }}
    >
      <SimpleForm toolbar={<Toolbar><SaveButton /><DeleteWithConfirmButton sx={{ ml: 'auto' }} /></Toolbar>}>
        {conflict && <ConflictNotice onReloaded={() => setConflict(false)} />}
        {schema.workflow?.drafts && <DraftBar schema={schema} locale={meta?.locale} />}
        {localized && site && <LocaleSwitcher site={site} locale={locale} onChange={setLocale} />}
        <RecordInputs schema={schema} translating={meta !== undefined} />
      </SimpleForm>
      <PackPanels resource={resourceName(schema)} on="edit" />
    </Edit>
  );
}

export function RecordShow() {
  const schema = useSchema();
  if (!schema) return null;
  return (
    <Show title={<RecordTitle schema={schema} />} aside={<ServerFields />}>
      <SimpleShowLayout>
        {Object.entries(properties(schema)).map(([name, s]) => fieldFor(name, s))}
      </SimpleShowLayout>
      <PackPanels resource={resourceName(schema)} on="show" />
      <Revisions resource={resourceName(schema)} />
    </Show>
  );
}

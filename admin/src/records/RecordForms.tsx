import { useState } from 'react';
import {
  Create, DeleteWithConfirmButton, Edit, SaveButton, Show, SimpleForm, SimpleShowLayout, Toolbar,
  useEditContext, useNotify, useRecordContext,
} from 'react-admin';
import { Alert, Box, Button, Typography } from '@mui/material';
import { useFormContext } from 'react-hook-form';
import type { SchemaItem } from '../api/schemas.js';
import { PackPanels } from '../packs/PackPanels.js';
import { formatDateTime } from './cells.js';
import { displayField, properties, resourceName, title, useSchema } from './Records.js';
import { fieldFor, inputFor } from './schema-inputs.js';
import { DraftBar } from '../workflow/DraftBar.js';

/** A record's create and edit forms and its page, generated from its JSON Schema (loaded on demand). */

function RecordInputs({ schema }: { schema: SchemaItem }) {
  const required = schema.schema.required ?? [];
  return <>{Object.entries(properties(schema)).map(([name, s]) => inputFor(name, s, schema.namespace, name, required.includes(name)))}</>;
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
  if (!schema) return null;
  return (
    <Edit
      title={<RecordTitle schema={schema} />} aside={<ServerFields />} mutationMode="pessimistic" redirect="list"
      mutationOptions={{
        onError: (error: any) => {
          if (error?.status === 412) setConflict(true);
          else notify(error?.message ?? 'The record was not saved', { type: 'error' });
        },
      }}
    >
      <SimpleForm toolbar={<Toolbar><SaveButton /><DeleteWithConfirmButton sx={{ ml: 'auto' }} /></Toolbar>}>
        {conflict && <ConflictNotice onReloaded={() => setConflict(false)} />}
        {schema.workflow?.drafts && <DraftBar schema={schema} />}
        <RecordInputs schema={schema} />
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
    </Show>
  );
}

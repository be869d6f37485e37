import { useState } from 'react';
import {
  Create, DateField, DeleteWithConfirmButton, Edit, SaveButton, Show, SimpleForm, SimpleShowLayout, TextField, Toolbar,
  useEditContext, useNotify,
} from 'react-admin';
import { Alert, Button } from '@mui/material';
import { useFormContext } from 'react-hook-form';
import type { SchemaItem } from '../api/schemas.js';
import { PackPanels } from '../packs/PackPanels.js';
import { properties, resourceName, title, useSchema } from './Records.js';
import { fieldFor, inputFor } from './schema-inputs.js';

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
      title={title(schema)} mutationMode="pessimistic" redirect="list"
      mutationOptions={{
        onError: (error: any) => {
          if (error?.status === 412) setConflict(true);
          else notify(error?.message ?? 'The record was not saved', { type: 'error' });
        },
      }}
    >
      <SimpleForm toolbar={<Toolbar><SaveButton /><DeleteWithConfirmButton sx={{ ml: 'auto' }} /></Toolbar>}>
        {conflict && <ConflictNotice onReloaded={() => setConflict(false)} />}
        <TextField source="id" label="Id" />
        <TextField source="version" label="Version" />
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
    <Show title={title(schema)}>
      <SimpleShowLayout>
        <TextField source="id" />
        {Object.entries(properties(schema)).map(([name, s]) => fieldFor(name, s))}
        <DateField source="createdAt" showTime />
        <DateField source="updatedAt" showTime />
        <TextField source="version" />
      </SimpleShowLayout>
      <PackPanels resource={resourceName(schema)} on="show" />
    </Show>
  );
}

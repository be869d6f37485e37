import { useState } from 'react';
import {
  Create, CreateButton, Datagrid, DateField, DeleteWithConfirmButton, Edit, ExportButton, FilterButton, List, SaveButton,
  Show, SimpleForm, SimpleShowLayout, TextField, Toolbar, TopToolbar, useEditContext, useNotify, useResourceContext,
} from 'react-admin';
import { Alert, Button, Typography } from '@mui/material';
import { useFormContext } from 'react-hook-form';
import { findSchema, type SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { OrderTransitions, ProductStock, WRITTEN_BY_PACK } from '../commerce/CommercePanels.js';
import { fieldFor, filtersFor, inputFor, isScalar } from './schema-inputs.js';

/** Screens for the records of any schema, generated from its JSON Schema (the resource is `ns.name`). */

function useSchema(): SchemaItem | null {
  const resource = useResourceContext();
  return (resource && findSchema(resource)) || null;
}

const resourceName = (s: SchemaItem) => `${s.namespace}.${s.name}`;
const properties = (s: SchemaItem) => s.schema.properties ?? {};
const title = (s: SchemaItem) => s.title || `${s.namespace}.${s.name}`;

export function RecordList() {
  const schema = useSchema();
  if (!schema) return <Typography sx={{ p: 2 }}>Loading the schema…</Typography>;
  const props = properties(schema);
  const canEdit = session.can('editor') && !WRITTEN_BY_PACK.has(`${schema.namespace}.${schema.name}`);
  return (
    <List
      title={title(schema)} filters={filtersFor(props)} sort={{ field: 'createdAt', order: 'DESC' }} perPage={25}
      actions={<TopToolbar><FilterButton />{canEdit && <CreateButton />}<ExportButton /></TopToolbar>}
      empty={false}
    >
      <Datagrid rowClick={canEdit ? 'edit' : 'show'} bulkActionButtons={false}>
        {Object.entries(props).filter(([, s]) => isScalar(s)).slice(0, 8).map(([name, s]) => fieldFor(name, s))}
        <DateField source="createdAt" label="Created" showTime />
      </Datagrid>
    </List>
  );
}

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
      {resourceName(schema) === 'erp.product' && <ProductStock />}
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
      {resourceName(schema) === 'erp.order' && <OrderTransitions />}
      {resourceName(schema) === 'erp.product' && <ProductStock />}
    </Show>
  );
}

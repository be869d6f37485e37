import { memo, useMemo } from 'react';
import { CreateButton, DataTable, ExportButton, FilterButton, List, ReferenceField, TextField, TopToolbar, useResourceContext } from 'react-admin';
import { Button, Typography } from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import { Link } from 'react-router-dom';
import { findSchema, type JsonSchema, type SchemaItem } from '../api/schemas.js';
import { session } from '../api/session.js';
import { allowed, listActionsFor } from '../packs/pack-screens.js';
import { cellFor, filtersFor } from './cells.js';
import { isScalar, labelOf } from './json-schema.js';
import { FIRST_PAGE } from './list-defaults.js';
import { IndexAdvice } from './IndexAdvice.js';

/**
 * The records table of any schema, generated from its JSON Schema (the resource is `ns.name`). Its forms and
 * record page are in RecordForms.tsx, loaded on demand: the first screen needs only the table.
 */

export function useSchema(): SchemaItem | null {
  const resource = useResourceContext();
  return (resource && findSchema(resource)) || null;
}

export const resourceName = (s: SchemaItem) => `${s.namespace}.${s.name}`;
export const properties = (s: SchemaItem) => s.schema.properties ?? {};
export const title = (s: SchemaItem) => s.title || `${s.namespace}.${s.name}`;

/**
 * The table's columns: react-admin's DataTable with a plain render function per cell (text formatted with
 * shared Intl formatters, no field component, no styled wrapper per cell), made once per schema.
 */
const RecordColumns = memo(function RecordColumns({ schema }: { schema: SchemaItem }) {
  return (
    <>
      {listColumns(schema).map(([name, s]) => {
        const target = typeof s['x-ref'] === 'string' ? findSchema(s['x-ref']) : undefined;
        if (!target) return <DataTable.Col key={name} source={name} label={labelOf(name, s)} render={cellFor(name, s)} />;
        // A reference: the referenced record's display field, linked to its page. react-admin gathers the
        // page's references into one getMany (one request per page, `filter[id][in]`).
        return (
          <DataTable.Col key={name} source={name} label={labelOf(name, s)}>
            <ReferenceField source={name} reference={resourceName(target)} link="show" emptyText="">
              <TextField source={displayField(target) ?? 'id'} />
            </ReferenceField>
          </DataTable.Col>
        );
      })}
    </>
  );
});

/** The server's fields as JSON Schema, for their cells and labels. */
const SERVER_FIELD_SCHEMAS: Record<string, JsonSchema> = {
  id: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' }, version: { type: 'integer' },
};

/**
 * The default columns: the schema's `x-list-columns` (CONTRACT 3), else its first eight scalar properties and
 * the creation time.
 */
export function listColumns(schema: SchemaItem): Array<[string, JsonSchema]> {
  const props = properties(schema);
  const declared = schema.schema['x-list-columns'];
  if (Array.isArray(declared) && declared.length) {
    return declared.filter((n): n is string => typeof n === 'string' && Boolean(props[n] ?? SERVER_FIELD_SCHEMAS[n]))
      .map((n) => [n, props[n] ?? SERVER_FIELD_SCHEMAS[n]]);
  }
  return [...Object.entries(props).filter(([, s]) => isScalar(s)).slice(0, 8), ['createdAt', SERVER_FIELD_SCHEMAS.createdAt]];
}

/** The property that stands for a record (`x-display-field`), else a `title`, `name` or `sku` it has. */
export function displayField(schema: SchemaItem): string | undefined {
  const props = properties(schema);
  const declared = schema.schema['x-display-field'];
  if (typeof declared === 'string' && props[declared]) return declared;
  return ['title', 'name', 'subject', 'sku', 'number'].find((n) => props[n]);
}

export function RecordList() {
  const schema = useSchema();
  const filters = useMemo(() => (schema ? filtersFor(properties(schema)) : []), [schema]);
  if (!schema) return <Typography sx={{ p: 2 }}>Loading the schema…</Typography>;
  const canEdit = session.can('editor') && !schema.sealed;
  const actions = listActionsFor(resourceName(schema)).filter((a) => allowed(a.role));
  return (
    <List
      // The console checks the session once for every screen (AdminUI requireAuth), and the API checks every
      // call: no second check (another request cycle and render) before the table asks for its rows.
      disableAuthentication
      title={title(schema)} filters={filters} sort={FIRST_PAGE.sort} perPage={FIRST_PAGE.perPage}
      actions={(
        <TopToolbar>
          <FilterButton />{canEdit && <CreateButton />}
          {/* A pack's own forms, e.g. for a sealed schema whose records its route writes. */}
          {actions.map((a) => <Button key={a.to} component={Link} to={a.to} startIcon={<AddIcon />} size="small">{a.label}</Button>)}
          <ExportButton />
        </TopToolbar>
      )}
      empty={false}
    >
      <IndexAdvice schema={schema} />
      <DataTable rowClick={canEdit ? 'edit' : 'show'} bulkActionButtons={false} size="small">
        <RecordColumns schema={schema} />
      </DataTable>
    </List>
  );
}


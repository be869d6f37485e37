import { CreateButton, DataTable, List, TopToolbar } from 'react-admin';
import { session } from '../api/session.js';

/** The tenant's schemas (a schema's page, with its type and examples, is SchemaShow.tsx, loaded on demand). */

export function SchemaList() {
  return (
    <List disableAuthentication title="Schemas" actions={<TopToolbar>{session.can('admin') && <CreateButton label="New schema" />}</TopToolbar>} pagination={false} perPage={1000}
      sort={{ field: 'namespace', order: 'ASC' }}>
      <DataTable rowClick="show" bulkActionButtons={false} size="small">
        {['namespace', 'name', 'title', 'scope', 'version'].map((source) => <DataTable.Col key={source} source={source} disableSort />)}
      </DataTable>
    </List>
  );
}


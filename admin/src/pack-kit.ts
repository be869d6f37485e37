/**
 * The console kit: everything a pack's console screens (`packs/<name>/admin/`) may use of the console, and the
 * only console module they import (besides packages: react, react-admin, @mui/material, react-router-dom, and recharts for charts).
 * Screens never import the console's other files or another pack's screens. A pack's declaration file
 * (`screens.ts`) imports types only, so that the kit and the screens load on demand, not with the first screen.
 */

// Calling the API (the console's token and tenant, errors as ApiError with the server's code and field issues).
export { api, call, query, isApiError, type ApiError, type Issue, type CallOptions } from './api/client.js';
// Who is signed in, on which tenant, and with which role (`session.can('editor')`); `useSession` re-renders on a change.
export { session } from './api/session.js';
export { useSession } from './layout/TenantPicker.js';
// Loading data (again when the tenant changes).
export { useApi } from './common/hooks.js';
// Forms generated from an operation's request body in the tenant's OpenAPI document.
export { OperationForm, useOperation } from './common/OperationForm.js';
export type { Operation } from './api/openapi.js';
// Record display: a cell's text for a JSON Schema property, dates, labels.
export { cellFor, formatDateTime } from './records/cells.js';
export { labelOf } from './records/json-schema.js';
// Money as a person reads it: integer cents of a currency in the user's locale (1999, EUR → €19.99).
export { formatMoney, minorDigits, parseDecimal } from './records/amounts.js';
// A dashboard card (a pack's widget): a heading, an optional action, its content.
export { DashboardCard } from './layout/Dashboard.js';
export type { JsonSchema, SchemaItem } from './api/schemas.js';
// What a pack's declaration file declares.
export type {
  ConsoleScreens, ConsoleRoute, ConsoleMenuEntry, ConsolePanel, ConsoleListAction, ConsoleWidget, ConsoleFieldInput, Role, ScreenLoader,
} from './packs/console-screens.js';

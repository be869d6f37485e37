import { cloneElement, useEffect, useState, type ReactElement, type ReactNode } from 'react';
import { Form } from 'react-admin';
import { Alert, Box, LinearProgress } from '@mui/material';
import { useFormState } from 'react-hook-form';
import { isApiError } from '../api/client.js';
import { operation, type Operation } from '../api/openapi.js';
import { compact } from '../api/data-provider.js';
import { inputFor } from '../records/schema-inputs.js';

/** The operation's description from the tenant's OpenAPI document, or why it could not be read. */
export function useOperation(method: string, path: string): { op: Operation | null; error: string | null } {
  const [state, setState] = useState<{ op: Operation | null; error: string | null }>({ op: null, error: null });
  useEffect(() => {
    let live = true;
    operation(method, path).then((op) => live && setState({ op, error: null }), (err: Error) => live && setState({ op: null, error: err.message }));
    return () => { live = false; };
  }, [method, path]);
  return state;
}

/** The form's own error (one the server did not tie to a field). */
function RootError() {
  const { errors } = useFormState();
  const message = (errors.root as any)?.serverError?.message ?? (errors.root as any)?.serverError;
  return message ? <Alert severity="error" role="alert" sx={{ my: 1 }}>{String(message)}</Alert> : null;
}

/**
 * A form generated from an operation's request body in the OpenAPI document (the same JSON Schema → input
 * mapping as record forms), sent by `submit`; the server's validation errors appear at their fields.
 * `leaveOut` drops body properties the screen sets itself (a dry-run switch made into two buttons); `idPrefix`
 * keeps the inputs' ids apart when a screen shows several forms (each input's id is its field name otherwise).
 */
export function OperationForm({ method, path, submit, leaveOut = [], idPrefix, children }: {
  method: string;
  path: string;
  /** `action`: the `name` of the submit button that sent the form (a screen with two of them). */
  submit: (body: Record<string, unknown>, action: string | null) => Promise<void>;
  leaveOut?: string[];
  idPrefix?: string;
  children: ReactNode;
}) {
  const { op, error } = useOperation(method, path);
  if (error) return <Alert severity="error" role="alert">{error}</Alert>;
  if (!op?.body) return <LinearProgress aria-label="Loading the form" />;
  const required = op.body.required ?? [];
  const fields = Object.entries(op.body.properties ?? {}).filter(([name]) => !leaveOut.includes(name));
  const onSubmit = async (values: Record<string, unknown>, event?: { nativeEvent?: Event }) => {
    const submitter = (event?.nativeEvent as SubmitEvent | undefined)?.submitter;
    try {
      await submit(compact(values), submitter?.getAttribute('name') ?? null);
    } catch (err) {
      if (isApiError(err)) return (err.body as { errors?: Record<string, unknown> })?.errors ?? { root: { serverError: err.message } };
      throw err;
    }
    return undefined;
  };
  return (
    <Form onSubmit={onSubmit as any} noValidate>
      <Box sx={{ display: 'flex', flexDirection: 'column', maxWidth: 640 }}>
        {fields.map(([name, s]) => {
          const input = inputFor(name, s, 'operation', name, required.includes(name));
          // An array's items take their ids from the array's source: only single inputs get the prefix.
          return idPrefix && s.type !== 'array' ? cloneElement(input as ReactElement<{ id?: string }>, { id: `${idPrefix}${name}` }) : input;
        })}
      </Box>
      <RootError />
      <Box sx={{ display: 'flex', gap: 1, mt: 1 }}>{children}</Box>
    </Form>
  );
}

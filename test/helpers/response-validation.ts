import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Every response a test app gives during the test run is recorded and, when the app closes, validated
 * against the app's own OpenAPI document (GET /api/v1/openapi.json) with ajv: the status must be
 * documented for the operation, and a JSON body must match the documented schema. The failures are
 * reported by the root hook in setup.ts, so the document cannot drift from the behaviour unnoticed.
 */

interface Recorded {
  method: string;
  path: string;
  status: number;
  body: unknown;
}

type Document = { paths: Record<string, Record<string, { responses?: Record<string, any> }>> };

const MAX_BODY_BYTES = 512 * 1024;

interface AppRecording {
  baseUrl: string;
  recorded: Recorded[];
  validated: boolean;
}

/**
 * Kept on globalThis: mocha may load the test files as CommonJS and the root hooks as ESM, which gives this
 * module two instances; both must see the same recordings.
 */
const state: { apps: AppRecording[]; failures: string[]; checked: number } =
  ((globalThis as Record<symbol, unknown>)[Symbol.for('headless-platform.response-validation')] ??= { apps: [], failures: [], checked: 0 }) as never;

/** Records the JSON responses of a test app's server (only those of the /api/v1 operations). */
export function recordResponses(server: Server, baseUrl: string): AppRecording {
  const recorded: Recorded[] = [];
  const recording: AppRecording = { baseUrl, recorded, validated: false };
  state.apps.push(recording);
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const write = res.write.bind(res) as (...args: any[]) => boolean;
    const end = res.end.bind(res) as (...args: any[]) => ServerResponse;
    const keep = (chunk: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_BODY_BYTES) return;
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      size += buffer.length;
      chunks.push(buffer);
    };
    res.write = ((chunk: unknown, ...rest: unknown[]) => { keep(chunk); return write(chunk, ...rest); }) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => { keep(chunk); return end(chunk, ...rest); }) as typeof res.end;
    res.once('finish', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (!path.startsWith('/api/v1/') || req.method === 'HEAD' || size > MAX_BODY_BYTES) return;
      const type = String(res.getHeader('content-type') ?? '');
      let body: unknown = undefined;
      if (type.includes('json') && chunks.length) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
      }
      recorded.push({ method: (req.method ?? 'GET').toLowerCase(), path, status: res.statusCode, body });
    });
  });
  return recording;
}

/** Validates what an app answered against its document (while it still listens); failures are kept for the report. */
export async function validateRecorded(recording: AppRecording): Promise<void> {
  if (recording.validated) return;
  recording.validated = true;
  const { baseUrl, recorded } = recording;
  if (!recorded.length) return;
  const res = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (!res.ok) return;
  const doc = (await res.json()) as Document;
  const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: false, validateFormats: true }));
  ajv.addSchema({ ...doc, $id: 'https://openapi.test/doc.json' } as object);
  const validators = new Map<string, ReturnType<Ajv2020['compile']>>();
  const operations = Object.keys(doc.paths)
    .map((template) => ({ template, pattern: pathPattern(template), params: (template.match(/\{/g) ?? []).length }))
    .sort((a, b) => a.params - b.params);

  for (const r of recorded) {
    // The most specific template (fewest parameters) serves the path; without the method there, the
    // router itself answered (404, 405).
    const operation = operations.find((o) => o.pattern.test(r.path));
    if (!operation || !doc.paths[operation.template]![r.method]) continue;
    const responses = doc.paths[operation.template]![r.method]!.responses ?? {};
    const response = responses[String(r.status)] ?? responses[`${String(r.status)[0]}XX`] ?? responses.default;
    const where = `${r.method.toUpperCase()} ${r.path} → ${r.status} (${operation.template})`;
    state.checked++;
    if (!response) {
      fail(`${where}: the status is not documented`);
      continue;
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema || r.body === undefined) continue;
    const pointer = ['paths', operation.template, r.method, 'responses', String(r.status) in responses ? String(r.status) : 'default', 'content', 'application/json', 'schema']
      .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    let validate = validators.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `https://openapi.test/doc.json#/${pointer}` });
      validators.set(pointer, validate);
    }
    if (!validate(r.body)) {
      const errors = (validate.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      fail(`${where}: the body does not match the document: ${errors}`);
    }
  }
}

function fail(message: string): void {
  if (!state.failures.includes(message) && state.failures.length < 300) state.failures.push(message);
}

function pathPattern(template: string): RegExp {
  const source = template.split(/(\{[^}]+\})/).map((part) => {
    if (!part.startsWith('{')) return part.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    return part === '{path}' ? '.+' : '[^/]+';
  }).join('');
  return new RegExp(`^${source}$`);
}

/** Validates the apps still open, then tells what the run found: how many responses were checked, and each mismatch. */
export async function responseValidationReport(): Promise<{ checked: number; failures: string[] }> {
  for (const app of state.apps) await validateRecorded(app).catch((err) => fail(`${app.baseUrl}: the document could not be read: ${(err as Error).message}`));
  return { checked: state.checked, failures: [...state.failures] };
}

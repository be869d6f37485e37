/**
 * MCP benchmark (short): each tool over /api/v1/mcp against its twin, the REST endpoint doing the same
 * work, interleaved request by request, sequential, on the real app: TEST_DB=sqlite|postgres (default sqlite).
 * The difference is what the protocol layer costs (JSON-RPC, the SDK server and transport per request,
 * listing the caller's tools, argument validation).
 *   node --import tsx scripts/bench/mcp.ts [--records 2000] [--requests 300]
 */
import { performance } from 'node:perf_hooks';
import { createTenant, startTestApp } from '../../test/helpers/test-app.js';
import { as } from '../../test/helpers/tokens.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2);
  return { n: sorted.length, p50: at(50), p95: at(95), max: at(100) };
};

const app = await startTestApp();
try {
  const tenant = await createTenant(app, 'bench');
  const editor = as(tenant, 'editor');
  await app.http.post('/api/v1/metadata/schemas').set(as(tenant, 'admin')).send({
    namespace: 'shop', name: 'note', indexes: [['stars']],
    schema: { type: 'object', additionalProperties: false, required: ['title'], properties: { title: { type: 'string' }, stars: { type: 'integer' } } },
  }).expect(201);
  for (let i = 0; i < arg('records', 2000); i++) {
    await app.http.post('/api/v1/data/shop/note').set(editor).send({ title: `note ${i}`, stars: i % 6 }).expect(201);
  }
  await app.http.post(`/api/v1/tenant/${tenant}/content/page`).set(editor)
    .send({ title: 'Opening hours', slug: 'opening-hours', status: 'published', content: 'We open at nine and close at six.' }).expect(201);

  let id = 0;
  const mcp = async (name: string, args: Record<string, unknown>) => {
    const res = await app.http.post('/api/v1/mcp').set({ ...editor, Accept: 'application/json, text/event-stream' })
      .send({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } });
    if (res.status !== 200 || res.body.result?.isError) throw new Error(`${name}: ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  };
  const scenarios: Array<{ name: string; twin: () => Promise<unknown>; tool: () => Promise<unknown> }> = [
    {
      name: 'query_records (filter, sort, limit 20) vs GET /data',
      twin: () => app.http.get('/api/v1/data/shop/note').query({ 'filter[stars][gte]': 3, sort: '-stars,title', limit: 20 }).set(editor).expect(200),
      tool: () => mcp('query_records', { namespace: 'shop', schema: 'note', filter: { stars: { gte: 3 } }, sort: ['-stars', 'title'], limit: 20 }),
    },
    {
      name: 'search_knowledge vs GET /public/.../knowledge',
      twin: () => app.http.get(`/api/v1/public/tenant/${tenant}/knowledge`).query({ q: 'nine', limit: 10 }).expect(200),
      tool: () => mcp('search_knowledge', { query: 'nine', limit: 10 }),
    },
    {
      name: 'create_record vs POST /data',
      twin: () => app.http.post('/api/v1/data/shop/note').set(editor).send({ title: 'rest', stars: 1 }).expect(201),
      tool: () => mcp('create_record', { namespace: 'shop', schema: 'note', data: { title: 'mcp', stars: 1 } }),
    },
  ];

  const results: Record<string, unknown> = { engine: app.engine };
  for (const scenario of scenarios) {
    const twinMs: number[] = [];
    const toolMs: number[] = [];
    for (let i = 0; i < 20; i++) { await scenario.twin(); await scenario.tool(); }
    for (let i = 0; i < arg('requests', 300); i++) {
      let started = performance.now();
      await scenario.twin();
      twinMs.push(performance.now() - started);
      started = performance.now();
      await scenario.tool();
      toolMs.push(performance.now() - started);
    }
    results[scenario.name] = { restMs: summary(twinMs), mcpMs: summary(toolMs) };
  }
  console.log(JSON.stringify(results, null, 2));
} finally {
  await app.close();
}

import { expect } from 'chai';
import { definePack, type McpToolDefinition } from '../../core/pack-api.js';

const tool: McpToolDefinition = {
  description: 'Echoes', input: { type: 'object', additionalProperties: false, properties: {} }, output: { type: 'object' }, handler: () => ({}),
};

describe('definePack({ tools })', () => {
  it('accepts a well-formed tool', () => {
    expect(definePack({ name: 'echo', tools: { echo_back: tool } }).tools).to.have.property('echo_back');
  });

  it('refuses at declaration a bad name, a schema that is not an object, and a public tool that writes', () => {
    expect(() => definePack({ name: 'echo', tools: { 'Echo-Back': tool } })).to.throw(/name must match/);
    expect(() => definePack({ name: 'echo', tools: { echo: { ...tool, input: { type: 'string' } } } })).to.throw(/input schema must have "type": "object"/);
    expect(() => definePack({ name: 'echo', tools: { echo: { ...tool, output: {} } } })).to.throw(/output schema/);
    expect(() => definePack({ name: 'echo', tools: { echo: { ...tool, role: 'editor', public: true } } })).to.throw(/public tool must be read-only/);
    expect(() => definePack({ name: 'echo', tools: { echo: { ...tool, description: '' } } })).to.throw(/needs a description/);
  });
});

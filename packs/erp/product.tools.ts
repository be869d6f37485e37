import type { McpToolDefinition } from '../../core/pack-api.js';
import { storefrontProduct } from './storefront.routes.js';

/** ERP's MCP tools: a product's price and stock for shop assistants, on /api/v1/mcp and on the public endpoint. */
export const productTools: Record<string, McpToolDefinition> = {
  product_availability: {
    title: 'Product availability',
    description: 'An active product by sku as the storefront shows it: name, net and gross price (cents), currency, inStock and availableStock, in real time.',
    public: true,
    input: {
      type: 'object', additionalProperties: false, required: ['sku'],
      properties: { sku: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' } },
    },
    output: storefrontProduct,
    handler: (args: { sku: string }, { rc, pack }) => pack.use('erp.catalog').storefrontProduct(rc, args.sku),
  },
};

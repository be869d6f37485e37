import type { PackContext } from '../../core/pack-api.js';

export type AiStatus = 'off' | 'used' | 'unavailable' | 'failed';

export interface CartFacts {
  items: Array<{ sku: string; quantity: number }>;
  coupon: { code: string; percentOff: number; expiresAt: string } | null;
  recommendations: Array<{ sku: string; name: string }>;
}

const AI_TIMEOUT_MS = 15_000;
const MAX_MESSAGE = 600;

/** The reminder from the template: the cart, the coupon (unless a dry run) and the recommendations. */
export function templateMessage(facts: CartFacts): string {
  const items = facts.items.map((i) => `${i.quantity} × ${i.sku}`).join(', ');
  const parts = [`You left ${items} in your cart.`];
  if (facts.coupon) parts.push(`Use the code ${facts.coupon.code} for ${facts.coupon.percentOff}% off until ${facts.coupon.expiresAt.slice(0, 10)}.`);
  if (facts.recommendations.length) parts.push(`You may also like: ${facts.recommendations.map((r) => r.name).join(', ')}.`);
  return parts.join(' ');
}

/**
 * The customer's message: the template, or with `useAi` one written by the configured OpenAI-compatible model
 * (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY) from the same facts. Without a model: the template and `unavailable`;
 * an error, or an answer that leaves out the coupon code: the template and `failed`.
 */
export async function cartMessage(pack: PackContext, facts: CartFacts, useAi: boolean): Promise<{ message: string; ai: AiStatus }> {
  const template = templateMessage(facts);
  if (!useAi) return { message: template, ai: 'off' };
  const { baseUrl, apiKey, model } = pack.config.llm;
  if (!baseUrl || !model) return { message: template, ai: 'unavailable' };
  try {
    const res = await pack.fetch.fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      timeoutMs: AI_TIMEOUT_MS,
      maxBytes: 256 * 1024,
      headers: { 'Content-Type': 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify({
        model,
        temperature: 0.4,
        messages: [
          {
            role: 'system',
            content: `Write a short, friendly reminder (at most ${MAX_MESSAGE} characters, plain text) to a shop customer who left items in the cart. `
              + 'Use only the facts given; quote the coupon code exactly when there is one.',
          },
          { role: 'user', content: JSON.stringify(facts) },
        ],
      }),
    });
    if (res.status >= 400) throw new Error(`the LLM answered ${res.status}`);
    const completion = JSON.parse(res.body.toString('utf8')) as { choices?: Array<{ message?: { content?: string } }> };
    const message = (completion.choices?.[0]?.message?.content ?? '').trim().slice(0, MAX_MESSAGE);
    if (!message || (facts.coupon && !message.includes(facts.coupon.code))) throw new Error('the LLM answer left out the facts');
    return { message, ai: 'used' };
  } catch (err) {
    pack.logger.warn({ err }, 'cart recovery: the LLM message failed; the template is used');
    return { message: template, ai: 'failed' };
  }
}

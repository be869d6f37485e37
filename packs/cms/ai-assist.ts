import type { PackContext } from '../../core/pack-api.js';
import type { Suggestion } from './import-suggestions.js';
import type { ExtractedPage } from './page-extractor.js';

export type AiStatus = 'used' | 'unavailable' | 'failed';

export interface AiImprovements {
  status: AiStatus;
  /** Improved titles and descriptions by page URL. */
  pages: Map<string, { title?: string; description?: string }>;
  suggestions: Suggestion[];
}

const AI_TIMEOUT_MS = 30_000;
const MAX_CONTENT_CHARS = 1500;

/**
 * Asks the configured OpenAI-compatible chat completions endpoint (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY)
 * for better titles, descriptions and suggestions, through the fetch service. Without one: `unavailable`;
 * an error or an unreadable answer: `failed`. The import works either way.
 */
export async function improveWithAi(pack: PackContext, pages: ExtractedPage[]): Promise<AiImprovements> {
  const none: AiImprovements = { status: 'unavailable', pages: new Map(), suggestions: [] };
  const { baseUrl, apiKey, model } = pack.config.llm;
  if (!baseUrl || !model) return none;
  const input = pages.map((p) => ({ url: p.url, title: p.title, description: p.description, content: p.markdown.slice(0, MAX_CONTENT_CHARS) }));
  const body = {
    model,
    temperature: 0.2,
    response_format: { type: 'json_object' },
    messages: [
      {
        role: 'system',
        content: 'You improve imported web pages for a CMS. Answer with JSON only: {"pages":[{"url","title","description"}],"suggestions":[{"url","message"}]}. '
          + 'Titles at most 60 characters, descriptions at most 160 characters, in the language of the page.',
      },
      { role: 'user', content: JSON.stringify({ pages: input }) },
    ],
  };
  try {
    const res = await pack.fetch.fetch(`${baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      timeoutMs: AI_TIMEOUT_MS,
      maxBytes: 1024 * 1024,
      headers: { 'Content-Type': 'application/json', ...(apiKey ? { Authorization: `Bearer ${apiKey}` } : {}) },
      body: JSON.stringify(body),
    });
    if (res.status >= 400) throw new Error(`the LLM answered ${res.status}`);
    const completion = JSON.parse(res.body.toString('utf8')) as { choices?: Array<{ message?: { content?: string } }> };
    const content = completion.choices?.[0]?.message?.content ?? '';
    const answer = JSON.parse(content.replace(/^```(?:json)?\s*|\s*```$/g, '')) as {
      pages?: Array<{ url?: unknown; title?: unknown; description?: unknown }>;
      suggestions?: Array<{ url?: unknown; message?: unknown }>;
    };
    const known = new Set(pages.map((p) => p.url));
    const improved = new Map<string, { title?: string; description?: string }>();
    for (const p of answer.pages ?? []) {
      if (typeof p.url !== 'string' || !known.has(p.url)) continue;
      improved.set(p.url, {
        ...(typeof p.title === 'string' && p.title.trim() ? { title: p.title.trim().slice(0, 300) } : {}),
        ...(typeof p.description === 'string' && p.description.trim() ? { description: p.description.trim().slice(0, 1000) } : {}),
      });
    }
    const suggestions: Suggestion[] = (answer.suggestions ?? [])
      .filter((s) => typeof s.url === 'string' && known.has(s.url) && typeof s.message === 'string')
      .slice(0, 100)
      .map((s) => ({ type: 'ai' as const, url: s.url as string, message: (s.message as string).slice(0, 500) }));
    return { status: 'used', pages: improved, suggestions };
  } catch (err) {
    pack.logger.warn({ err }, 'AI assistance for the import failed; continuing with heuristics');
    return { ...none, status: 'failed' };
  }
}

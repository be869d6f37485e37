import type { ExtractedPage } from './page-extractor.js';

export type SuggestionType = 'missing_description' | 'duplicate_title' | 'thin_page' | 'ai';

export interface Suggestion {
  type: SuggestionType;
  url: string;
  message: string;
  /** What apply_suggestions writes (absent when the fix needs a person, e.g. a thin page). */
  fix?: { field: 'title' | 'description'; value: string };
}

export const THIN_PAGE_WORDS = 50;

/** Heuristic suggestions: pages without a meta description, titles used twice, pages with little text. */
export function suggestFixes(pages: ExtractedPage[]): Suggestion[] {
  const suggestions: Suggestion[] = [];
  const byTitle = new Map<string, ExtractedPage[]>();
  for (const page of pages) {
    const key = page.title.trim().toLowerCase();
    byTitle.set(key, [...(byTitle.get(key) ?? []), page]);
  }
  for (const page of pages) {
    if (!page.description) {
      const value = summarise(page.markdown);
      suggestions.push({
        type: 'missing_description', url: page.url, message: 'The page has no meta description',
        ...(value ? { fix: { field: 'description' as const, value } } : {}),
      });
    }
    const twins = byTitle.get(page.title.trim().toLowerCase()) ?? [];
    if (twins.length > 1 && twins[0] !== page) {
      const heading = /^#{1,6}\s+(.+)$/m.exec(page.markdown)?.[1]?.trim();
      const distinct = heading && heading.toLowerCase() !== page.title.toLowerCase() ? `${heading} | ${page.title}` : `${page.title} (${new URL(page.url).pathname})`;
      suggestions.push({
        type: 'duplicate_title', url: page.url, message: `The title "${page.title}" is also used by ${twins[0]!.url}`,
        fix: { field: 'title', value: distinct.slice(0, 300) },
      });
    }
    if (page.wordCount < THIN_PAGE_WORDS) {
      suggestions.push({ type: 'thin_page', url: page.url, message: `The page has only ${page.wordCount} words of content` });
    }
  }
  return suggestions;
}

/** The first sentences of the content as plain text, at most 160 characters. */
export function summarise(markdown: string): string {
  const text = markdown
    .replace(/^#{1,6}\s+.*$/gm, ' ')
    .replace(/!\[[^\]]*\]\([^)]*\)/g, ' ')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*_`>#-]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= 160) return text;
  const cut = text.slice(0, 157);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), 100))}…`;
}

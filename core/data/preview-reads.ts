import type { PreviewOverlay } from '../base/request-context.js';
import type { RecordQuery } from './list-query.js';

type Condition = NonNullable<RecordQuery['filter']>[number];

/**
 * The record reads of a preview (CONTRACT.md 17.3, `rc.preview`): the records a preview shows stand in for the live
 * ones, and its draft-only records appear as if published. Lists keep the live page's order and paging; a previewed
 * record is checked against the list's conditions in memory (eq, ne, in, nin, contains, exists; the others pass),
 * and previewed records the page did not hold are added after it when they meet them. `show` turns a draft's
 * stored document into the list's item (its locale).
 */
export async function previewList(
  preview: PreviewOverlay, namespace: string, name: string, items: Array<Record<string, unknown>>, query: RecordQuery,
  show: (draft: Record<string, unknown>) => Record<string, unknown> = (draft) => draft,
): Promise<Array<Record<string, unknown>>> {
  const shown = await preview.recordsOf(namespace, name);
  if (!shown.size) return items;
  const meets = (r: Record<string, unknown>) => (query.filter ?? []).every((c) => holds(r, c)) && (!query.anyOf?.length || query.anyOf.some((c) => holds(r, c)));
  const out = items.flatMap((item) => {
    const draft = shown.get(String(item.id));
    return !draft ? [item] : meets(draft) ? [show(draft)] : [];
  });
  const held = new Set(items.map((i) => String(i.id)));
  for (const [id, draft] of shown) if (!held.has(id) && meets(draft)) out.push(show(draft));
  return out;
}

/** One record as a preview shows it: its draft when the preview holds one, else the live record (null stays null). */
export async function previewOne<T extends Record<string, unknown>>(preview: PreviewOverlay, namespace: string, name: string, id: string, live: T | null): Promise<T | null> {
  return ((await preview.recordsOf(namespace, name)).get(id) as T | undefined) ?? live;
}

/** A record found by field values, as a preview shows it: a previewed record that matches, else the live one unless previewed otherwise. */
export async function previewBy<T extends Record<string, unknown>>(
  preview: PreviewOverlay, namespace: string, name: string, match: Record<string, unknown>, live: T | null,
): Promise<T | null> {
  const shown = await preview.recordsOf(namespace, name);
  for (const draft of shown.values()) if (Object.entries(match).every(([f, v]) => draft[f] === v)) return draft as T;
  return live && shown.has(String(live.id)) ? null : live;
}

function holds(record: Record<string, unknown>, { field, op = 'eq', value }: Condition): boolean {
  const stored = record[field];
  const list = Array.isArray(value) ? value.map(String) : String(value).split(',');
  switch (op) {
    case 'eq': return String(stored) === String(value);
    case 'ne': return String(stored) !== String(value);
    case 'in': return list.includes(String(stored));
    case 'nin': return !list.includes(String(stored));
    case 'contains': return typeof stored === 'string' && stored.toLowerCase().includes(String(value).toLowerCase());
    case 'exists': return (stored !== undefined && stored !== null) === (String(value) !== 'false');
    default: return true;
  }
}

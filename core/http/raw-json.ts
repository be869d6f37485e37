/**
 * JSON text that goes into a response as it is, without being parsed and serialised again: a list of
 * records whose documents come from the database as JSON text (see RecordsService.listJson). Serialise a
 * body holding RawJson values with `stringifyWithRaw`, never with JSON.stringify alone.
 */
export class RawJson {
  constructor(readonly text: string) {}

  toJSON(): string {
    pending.push(this.text);
    return MARK;
  }
}

/** What each RawJson stands for during a stringify: a NUL character can only appear escaped in JSON text. */
const MARK = '\u0000raw-json\u0000';
const ESCAPED_MARK = JSON.stringify(MARK);
let pending: string[] = [];

/** JSON.stringify of `value`, with each RawJson's text in its place. */
export function stringifyWithRaw(value: unknown): string {
  pending = [];
  const text = JSON.stringify(value);
  const raws = pending;
  pending = [];
  if (!raws.length) return text;
  const parts = text.split(ESCAPED_MARK);
  // Only RawJson writes the mark (no other string of a body holding RawJson carries a NUL).
  if (parts.length !== raws.length + 1) throw new Error('stringifyWithRaw: a string of the body holds the raw-json mark');
  let out = parts[0];
  for (let i = 0; i < raws.length; i++) out += raws[i] + parts[i + 1];
  return out;
}

/** Whether a route handler's result holds RawJson among its own values (`{ items: RawJson, ... }`). */
export function holdsRawJson(result: unknown): boolean {
  if (!result || typeof result !== 'object') return false;
  for (const value of Object.values(result)) if (value instanceof RawJson) return true;
  return false;
}

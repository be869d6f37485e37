/**
 * Takes top-level members out of a JSON object's text without parsing the rest of it: expansions
 * (CONTRACT.md 12.2) put the referenced records in place of a few relation fields, and parsing and
 * serialising every document of a page only to move those fields cost as much as reading the page.
 * The text must be valid JSON (it comes from the database: JSON.stringify on the way in, or jsonb's
 * own output, which adds spaces after `:` and `,`).
 */

/** The members of a JSON object's text as a record's JSON text takes them (recordJsonOf): each led by a comma, '' for none. */
export function membersOf(text: string): string {
  const open = text.indexOf('{');
  const close = text.lastIndexOf('}');
  return close - open > 1 ? `,${text.slice(open + 1, close)}` : '';
}

/**
 * The top-level members named in `fields` taken out of the object `text`: the other members as they are
 * (`members`: each led by a comma, or empty when none is left) and the fields' values (undefined where the
 * object lacks one); null when it holds none of them, so that the caller keeps the text as it is.
 * `quoted` is each field as a JSON string (`"category"`), made once per list instead of once per document.
 */
export function takeMembers(
  text: string, fields: readonly string[], quoted: readonly string[] = fields.map((f) => JSON.stringify(f)),
): { members: string; values: unknown[] } | null {
  // Fast path: a field that is not even mentioned is not a member (our writers never escape key letters).
  if (!mentions(text, quoted, 0)) return null;
  const values: unknown[] = fields.map(() => undefined);
  // The kept members go into `members` as runs of the text as it is (members between two taken ones, with
  // their own separators), so that a document is cut, not taken apart and joined again.
  let members = '';
  let runStart = -1;
  let runEnd = -1;
  let left = fields.length;
  let i = skipSpace(text, text.indexOf('{') + 1);
  while (i < text.length && text.charCodeAt(i) !== CLOSE_BRACE) {
    const keyStart = i;
    const keyEnd = endOfString(text, i);
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const valueEnd = endOfValue(text, valueStart);
    const at = fieldAt(text, keyStart, keyEnd, fields, quoted);
    if (at >= 0) {
      // A repeated key is taken out too, its last value kept (as JSON.parse does).
      if (values[at] === undefined) left--;
      values[at] = valueOf(text, valueStart, valueEnd);
      if (runStart >= 0) members += `,${text.slice(runStart, runEnd)}`;
      runStart = -1;
    } else {
      if (runStart < 0) runStart = keyStart;
      runEnd = valueEnd;
    }
    i = skipSpace(text, valueEnd);
    if (text.charCodeAt(i) === COMMA) i = skipSpace(text, i + 1);
    if (left === 0 && !mentions(text, quoted, i)) {
      // Every field is taken: the members after it are kept whole, without reading them one by one.
      let end = text.length;
      while (end > i && text.charCodeAt(end - 1) !== CLOSE_BRACE) end--;
      end--;
      while (end > i && isSpace(text.charCodeAt(end - 1))) end--;
      if (end > i) {
        if (runStart < 0) runStart = i;
        runEnd = end;
      }
      break;
    }
  }
  if (left === fields.length) return null;
  if (runStart >= 0) members += `,${text.slice(runStart, runEnd)}`;
  return { members, values };
}

/** Whether one of the quoted keys occurs in `text` from `from` on (as a key or not). */
function mentions(text: string, quoted: readonly string[], from: number): boolean {
  for (let f = 0; f < quoted.length; f++) if (text.indexOf(quoted[f], from) >= 0) return true;
  return false;
}

/**
 * Which of `fields` the key text[keyStart, keyEnd) (quotes included) names, or -1: compared in place,
 * without cutting the key out; a key with escapes is decoded first.
 */
function fieldAt(text: string, keyStart: number, keyEnd: number, fields: readonly string[], quoted: readonly string[]): number {
  const length = keyEnd - keyStart;
  let longer = false;
  for (let f = 0; f < quoted.length; f++) {
    if (quoted[f].length === length && text.startsWith(quoted[f], keyStart)) return f;
    if (length > quoted[f].length) longer = true;
  }
  // An escape takes more characters than the letter it stands for: only a longer key may spell a field.
  if (!longer) return -1;
  for (let j = keyStart + 1; j < keyEnd - 1; j++) {
    if (text.charCodeAt(j) === BACKSLASH) return fields.indexOf(JSON.parse(text.slice(keyStart, keyEnd)) as string);
  }
  return -1;
}

/**
 * The JSON value text[start, end): a string without escapes is cut out, and so is each string of an array
 * of such strings (a many-relation's ids); anything else is parsed.
 */
function valueOf(text: string, start: number, end: number): unknown {
  const c = text.charCodeAt(start);
  if (c === QUOTE) {
    const inner = text.slice(start + 1, end - 1);
    if (!inner.includes('\\')) return inner;
  } else if (c === OPEN_BRACKET) {
    const strings = plainStrings(text, start, end);
    if (strings) return strings;
  }
  return JSON.parse(text.slice(start, end));
}

/** The array text[start, end) as its strings when it holds only strings without escapes, else null. */
function plainStrings(text: string, start: number, end: number): string[] | null {
  const strings: string[] = [];
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === CLOSE_BRACKET) return strings;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return null;
    const close = text.indexOf('"', i + 1);
    if (close < 0 || close >= end) return null;
    const s = text.slice(i + 1, close);
    if (s.includes('\\')) return null;
    strings.push(s);
    i = skipSpace(text, close + 1);
    const d = text.charCodeAt(i);
    if (d === CLOSE_BRACKET) return i === end - 1 ? strings : null;
    if (d !== COMMA) return null;
    i = skipSpace(text, i + 1);
  }
}

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;
const OPEN_BRACKET = 91;
const CLOSE_BRACKET = 93;

function skipSpace(text: string, i: number): number {
  let c = text.charCodeAt(i);
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++i);
  return i;
}

/** The index after the string that starts (with its quote) at `i`. */
function endOfString(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new SyntaxError('Unterminated string in JSON text');
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

/** The index after the value that starts at `i` (a string, an object, an array or a scalar). */
function endOfValue(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return endOfString(text, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    let j = i;
    while (j < text.length) {
      const d = text.charCodeAt(j);
      if (d === QUOTE) {
        j = endOfString(text, j);
        continue;
      }
      if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if ((d === CLOSE_BRACE || d === CLOSE_BRACKET) && --depth === 0) return j + 1;
      j++;
    }
    throw new SyntaxError('Unterminated object or array in JSON text');
  }
  let j = i;
  for (;;) {
    const d = text.charCodeAt(j);
    if (Number.isNaN(d) || d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || d === 32 || d === 10 || d === 13 || d === 9) return j;
    j++;
  }
}

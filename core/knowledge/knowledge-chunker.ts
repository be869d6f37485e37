/** One chunk of a document: the heading it sits under (if any) and its text. */
export interface KnowledgeChunk {
  heading: string | null;
  text: string;
}

export const CHUNK_LIMITS = { maxChars: 2000, maxChunks: 200 };

const HEADING = /^#{1,6}\s+(.+?)\s*#*\s*$/;

/**
 * Splits Markdown into chunks of at most `maxChars` characters: first on headings, then on blank lines
 * (paragraphs), and a paragraph longer than the limit on word boundaries.
 */
export function chunkMarkdown(markdown: string, maxChars = CHUNK_LIMITS.maxChars): KnowledgeChunk[] {
  const sections: KnowledgeChunk[] = [];
  let current: KnowledgeChunk = { heading: null, text: '' };
  for (const line of markdown.replace(/\r\n?/g, '\n').split('\n')) {
    const heading = HEADING.exec(line);
    if (heading) {
      if (current.text.trim()) sections.push(current);
      current = { heading: heading[1]!.trim(), text: `${line}\n` };
    } else {
      current.text += `${line}\n`;
    }
  }
  if (current.text.trim()) sections.push(current);

  const chunks: KnowledgeChunk[] = [];
  for (const section of sections) {
    for (const text of packParagraphs(section.text, maxChars)) chunks.push({ heading: section.heading, text });
    if (chunks.length >= CHUNK_LIMITS.maxChunks) break;
  }
  return chunks.slice(0, CHUNK_LIMITS.maxChunks);
}

function packParagraphs(text: string, maxChars: number): string[] {
  const out: string[] = [];
  let buffer = '';
  const flush = () => {
    if (buffer.trim()) out.push(buffer.trim());
    buffer = '';
  };
  for (const paragraph of text.split(/\n{2,}/)) {
    const pieces = paragraph.length > maxChars ? splitWords(paragraph, maxChars) : [paragraph];
    for (const piece of pieces) {
      if (buffer && buffer.length + piece.length + 2 > maxChars) flush();
      buffer = buffer ? `${buffer}\n\n${piece}` : piece;
    }
  }
  flush();
  return out;
}

function splitWords(text: string, maxChars: number): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > maxChars) {
      out.push(line);
      line = '';
    }
    // A single "word" longer than the limit (a data URI, say) is cut.
    for (let w = word; w.length > 0; w = w.slice(maxChars)) {
      const part = w.slice(0, maxChars);
      if (line && line.length + part.length + 1 > maxChars) {
        out.push(line);
        line = '';
      }
      line = line ? `${line} ${part}` : part;
    }
  }
  if (line) out.push(line);
  return out;
}

/** The words of a search query (letters and digits), at most 16 of them, lower-cased. */
export function queryTerms(q: string): string[] {
  return (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 16);
}

import type { AppContext } from '../http/app-state.js';
import { NotFound, RangeNotSatisfiable } from '../base/errors.js';
import type { ByteRange } from './drivers/storage-driver.js';
import { isActiveContent, type StorageService, type StoredObject } from './storage.service.js';
import { matchesEtag } from '../http/conditional.js';

/**
 * Streams an object as the HTTP answer: Content-Type from the metadata, ETag and Last-Modified,
 * 304 on a matching If-None-Match, 206 on a single satisfiable Range (416 otherwise), and the headers
 * that keep a browser from running what it downloads (nosniff; attachment for HTML and SVG).
 */
export async function sendObject(ctx: AppContext, storage: StorageService, object: StoredObject, cacheControl: string): Promise<void> {
  ctx.set('ETag', object.etag);
  ctx.set('Last-Modified', new Date(object.updatedAt).toUTCString());
  ctx.set('Cache-Control', cacheControl);
  ctx.set('X-Content-Type-Options', 'nosniff');
  // Uploaded bytes never run as a page of the service's origin, whatever type they claim (XML, XHTML, ...).
  ctx.set('Content-Security-Policy', "sandbox; default-src 'none'");
  ctx.set('Accept-Ranges', 'bytes');
  if (isActiveContent(object.contentType)) ctx.set('Content-Disposition', 'attachment');

  if (matchesEtag(ctx.get('If-None-Match'), object.etag)) {
    ctx.status = 304;
    ctx.body = '';
    return;
  }

  const range = parseRange(ctx.get('Range'), object.size);
  if (range === 'unsatisfiable') {
    throw RangeNotSatisfiable(object.size, [], { 'Content-Range': `bytes */${object.size}` });
  }
  const length = range ? range.end - range.start + 1 : object.size;
  ctx.status = range ? 206 : 200;
  if (range) ctx.set('Content-Range', `bytes ${range.start}-${range.end}/${object.size}`);
  if (ctx.method === 'HEAD') {
    ctx.body = '';
  } else {
    try {
      ctx.body = await storage.open(object, range ?? undefined);
    } catch (err) {
      if (isMissing(err)) throw NotFound('The object is gone');
      throw err;
    }
  }
  ctx.set('Content-Type', object.contentType);
  ctx.length = length;
}

/**
 * A single `bytes=` range: `a-b`, `a-` or `-n`. Null means "send everything" (no header, another
 * unit or several ranges); 'unsatisfiable' means 416.
 */
export function parseRange(header: string, size: number): ByteRange | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === '' && last === '') return null;
  let start: number;
  let end: number;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(first);
    end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
    if (last !== '' && Number(last) < start) return null;
    if (start >= size) return 'unsatisfiable';
  }
  return { start, end };
}

function isMissing(err: unknown): boolean {
  const e = err as { code?: string; name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.code === 'ENOENT' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}

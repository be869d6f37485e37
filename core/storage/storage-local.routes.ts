import type { PackRouter } from '../http/route.js';
import { sendObject } from './send-object.js';
import type { StorageService } from './storage.service.js';
import { releaseUpload } from './upload-request.js';
import { UPLOAD_ANSWER_SCHEMA, uploadAnswer } from './upload-answer.js';

const tags = ['storage'];

/**
 * The local driver's presigned PUT and signed GET: public endpoints whose query carries an HMAC
 * signature (SIGNING_SECRET) over method, key, expiry and constraints. Mounted only with the local driver.
 */
export function storageLocalRoutes(router: PackRouter, storage: StorageService): void {
  router.put('/storage/local/objects', {
    summary: 'Upload with a presigned URL (local driver)',
    description: 'The URL comes from GET /storage/presigned-upload. The Content-Type must be the signed one and the body at '
      + 'most maxBytes; a tampered or expired URL answers 403, a URL of a suspended or deleted tenant 404 tenant_not_found.',
    tags, auth: 'public', body: 'raw',
    query: {
      type: 'object',
      required: ['key', 'contentType', 'maxBytes', 'visibility', 'expires', 'signature'],
      properties: {
        key: { type: 'string' }, contentType: { type: 'string' }, maxBytes: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        visibility: { type: 'string', enum: ['public', 'private'] }, expires: { type: 'integer', maximum: Number.MAX_SAFE_INTEGER }, signature: { type: 'string' },
      },
    },
    response: UPLOAD_ANSWER_SCHEMA,
    errors: ['validation_failed', 'forbidden', 'tenant_not_found', 'payload_too_large'],
  }, async (ctx) => {
    const object = await releaseUpload(ctx, () => storage.receiveSignedUpload(
      ctx.state.query, ctx.get('Content-Type') || undefined, ctx.request.length ?? null, ctx.req,
    ));
    return uploadAnswer(object);
  });

  router.get('/storage/local/objects', {
    summary: 'Download with a signed URL (local driver)',
    description: 'The URL comes from GET /storage/signed-url; a tampered or expired URL answers 403, a URL of a suspended or deleted tenant 404 tenant_not_found. Answers Range and If-None-Match.',
    tags, auth: 'public',
    query: {
      type: 'object',
      required: ['key', 'expires', 'signature'],
      properties: { key: { type: 'string' }, expires: { type: 'integer', maximum: Number.MAX_SAFE_INTEGER }, signature: { type: 'string' } },
    },
    errors: ['validation_failed', 'forbidden', 'tenant_not_found', 'not_found', 'range_not_satisfiable'],
  }, async (ctx) => {
    const { key, expires, signature } = ctx.state.query;
    const object = await storage.openSignedDownload(key, expires, signature);
    await sendObject(ctx, storage, object, 'private, max-age=0');
  });
}

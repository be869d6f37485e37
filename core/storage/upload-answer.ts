import type { StoredObject } from './storage.repository.js';

/** What an upload answers, on POST /storage/objects and on the local driver's presigned PUT. */
export function uploadAnswer(object: StoredObject) {
  return { key: object.key, size: object.size, contentType: object.contentType, sha256: object.sha256, visibility: object.visibility };
}

export const UPLOAD_ANSWER_SCHEMA = {
  type: 'object',
  properties: {
    key: { type: 'string' }, size: { type: 'integer' }, contentType: { type: 'string' },
    sha256: { type: 'string' }, visibility: { type: 'string', enum: ['public', 'private'] },
  },
};

import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { bffError } from './envelope.js';
import { BadRequest, HeadersTooLarge, RequestTimeout, type AppError } from '../base/errors.js';

/** What Node's parser errors mean to a client. */
function errorFor(code: string | undefined): AppError {
  if (code === 'HPE_HEADER_OVERFLOW') return HeadersTooLarge();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return RequestTimeout();
  return BadRequest('The request could not be parsed (a malformed request line or header)');
}

/**
 * Requests Node cannot parse (a bad header byte, a malformed request line) never reach koa: answer them in
 * the BFF envelope with an X-Request-Id, then close the connection, instead of Node's bare 400 without a body.
 */
export function answerClientErrors(server: Server, logger: Logger): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const error = errorFor(err.code);
    const body = JSON.stringify(bffError(error.code, error.message, []));
    const requestId = randomUUID();
    logger.info({ requestId, code: err.code }, 'unparsable request refused');
    socket.end([
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `X-Request-Id: ${requestId}`,
      'Connection: close',
      '',
      body,
    ].join('\r\n'));
  });
}

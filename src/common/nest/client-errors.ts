import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { isOpenAiPath, toEnvelope } from '../errors/envelope';
import { ResilienceError } from '../errors/resilience-error';

const MALFORMED = 'the request is malformed';
const BAD_FRAMING = 'Content-Length or Transfer-Encoding is invalid or ambiguous';
const BAD_BODY = 'the request body is malformed or incomplete';

/**
 * The status and fixed message for each error of Node's parser (and its request timeout), with
 * the status Node itself gives it. The messages never quote the request: the error's own text
 * and its `rawPacket` may hold the request's bytes.
 */
const CLIENT_ERRORS: Record<string, [status: number, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'the request line and headers are larger than the limit'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'chunk extensions are larger than the limit'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'the request did not arrive in time'],
  HPE_INVALID_METHOD: [400, 'the request method is not valid'],
  HPE_INVALID_URL: [400, 'the request target is not valid'],
  HPE_INVALID_VERSION: [400, 'the HTTP version is not valid or not supported'],
  HPE_PAUSED_H2_UPGRADE: [400, 'HTTP/2 is not served on this port'],
  HPE_INVALID_HEADER_TOKEN: [400, 'a header is malformed'],
  HPE_CR_EXPECTED: [400, 'a line does not end in CRLF'],
  HPE_LF_EXPECTED: [400, 'a line does not end in CRLF'],
  HPE_INVALID_CONTENT_LENGTH: [400, BAD_FRAMING],
  HPE_UNEXPECTED_CONTENT_LENGTH: [400, BAD_FRAMING],
  HPE_INVALID_TRANSFER_ENCODING: [400, BAD_FRAMING],
  HPE_INVALID_CHUNK_SIZE: [400, BAD_BODY],
  HPE_INVALID_EOF_STATE: [400, BAD_BODY],
};

/**
 * The envelope for an error Node reports on a connection (its `clientError` event), or
 * undefined when nothing should be written: any error that is not the parser's or the request
 * timeout (ECONNRESET, EPIPE, ...) means the peer is gone or the socket broke.
 */
export function clientErrorAnswer(error: { code?: string }): ResilienceError | undefined {
  const code = error.code ?? '';
  if (Object.hasOwn(CLIENT_ERRORS, code)) {
    const [status, message] = CLIENT_ERRORS[code];
    return new ResilienceError('invalid_request', message, { status });
  }
  return code.startsWith('HPE_') ? new ResilienceError('invalid_request', MALFORMED) : undefined;
}

/** A whole HTTP/1.1 response with the envelope as its body, for writing straight on a socket. */
export function rawEnvelopeResponse(error: ResilienceError): string {
  const body = JSON.stringify(toEnvelope(error));
  return (
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/**
 * Fastify's `clientErrorHandler`: answers a request Node could not parse (or that timed out)
 * with the envelope instead of Fastify's own body, then destroys the socket as Node does, since
 * the parser cannot go on from a broken message.
 */
export function answerClientError(error: { code?: string }, socket: Socket): void {
  if (socket.destroyed) return;
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  // Bytes after a request that asked to close the connection are to be ignored (RFC 9112 9.6),
  // not answered: that request's response still goes out, and then Node closes the connection.
  if (error.code === 'HPE_CLOSED_CONNECTION' && inFlight) return;
  const answer = clientErrorAnswer(error);
  // A response already under way on this socket (its headers written) would be corrupted by a
  // second status line; the client learns of the failure from the closed connection instead.
  if (answer && socket.writable && !inFlight?.headersSent) socket.write(rawEnvelopeResponse(answer));
  socket.destroy(error as Error);
}

/** An `Expect` other than 100-continue (Node answers 417 with an empty body). */
function answerExpectation(request: IncomingMessage, response: ServerResponse): void {
  const error = new ResilienceError('invalid_request', 'only Expect: 100-continue is supported', { status: 417 });
  writeEnvelope(response, error, isOpenAiPath(request.url));
}

/** CONNECT, which Node would drop without a word: no route serves it. */
function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  if (socket.writable) socket.write(rawEnvelopeResponse(new ResilienceError('not_found', 'no such route')));
  socket.destroy();
}

/**
 * HTTP/1.1 without Host, and any request with two: refused as RFC 9112 says (400, connection
 * closed), with the envelope. Node's own check is off (`requireHostHeader: false`) because its
 * 400 has no body, and Node keeps the first of two Host headers without a word: a proxy in front
 * that read the second would route the request elsewhere than the one this process saw.
 */
function rejectHostless(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const raw = request.raw;
  let message: string | undefined;
  if (raw.headers.host === undefined) {
    if (raw.httpVersionMajor === 1 && raw.httpVersionMinor === 1) message = 'HTTP/1.1 requests must have a Host header';
  } else if (hostHeaders(raw.rawHeaders) > 1) {
    message = 'a request must not have more than one Host header';
  }
  if (message === undefined) {
    done();
    return;
  }
  const error = new ResilienceError('invalid_request', message);
  void reply
    .status(error.status)
    .header('connection', 'close')
    .type('application/json; charset=utf-8')
    .send(toEnvelope(error, { openai: isOpenAiPath(raw.url) }));
}

function writeEnvelope(response: ServerResponse, error: ResilienceError, openai: boolean): void {
  if (response.headersSent) return;
  const body = JSON.stringify(toEnvelope(error, { openai }));
  // Closing: the client may already be sending a body no route will read.
  response.writeHead(error.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  });
  response.end(body);
}

/**
 * Gives the envelope to the requests Node's HTTP layer refuses before Fastify routes them. Goes
 * with the adapter options `clientErrorHandler: answerClientError` and
 * `http: { requireHostHeader: false }`.
 */
export function answerProtocolErrors(fastify: FastifyInstance): void {
  fastify.server.on('checkExpectation', answerExpectation);
  fastify.server.on('connect', answerConnect);
  fastify.addHook('onRequest', rejectHostless);
}

/** How many Host headers the request has: `rawHeaders` keeps every one, names and values in turn. */
function hostHeaders(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let index = 0; index < rawHeaders.length; index += 2) {
    const name = rawHeaders[index];
    if (name.length === 4 && name.toLowerCase() === 'host') count++;
  }
  return count;
}

import { connect, createServer, type Server, type Socket } from 'node:net';
import { ResilienceError } from '../errors/resilience-error';
import { answerClientError, clientErrorAnswer, rawEnvelopeResponse } from './client-errors';

/** A connected pair on loopback: `server` is the side Node's HTTP server would hold. */
interface Pair {
  server: Socket;
  /** Everything the client side reads until the server side closes. */
  received: Promise<string>;
}

function parserError(code: string): Error & { code: string; rawPacket: Buffer } {
  return Object.assign(new Error(`Parse Error: secret-in-message ${code}`), {
    code,
    rawPacket: Buffer.from('GET /secret-in-packet HTTP/1.1\r\n'),
  });
}

describe('client errors', () => {
  let listener: Server;
  let port: number;

  beforeAll(async () => {
    listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });

  afterAll(() => new Promise((resolve) => listener.close(resolve)));

  async function pair(): Promise<Pair> {
    const accepted = new Promise<Socket>((resolve) => listener.once('connection', resolve));
    const client = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    client.on('data', (chunk: Buffer) => chunks.push(chunk));
    client.on('error', () => undefined);
    const received = new Promise<string>((resolve) =>
      client.on('close', () => resolve(Buffer.concat(chunks).toString('latin1'))),
    );
    const server = await accepted;
    // Node's HTTP server keeps a listener like this one once the socket has failed.
    server.on('error', () => undefined);
    return { server, received };
  }

  describe('clientErrorAnswer', () => {
    it.each([
      ['HPE_HEADER_OVERFLOW', 431],
      ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 413],
      ['ERR_HTTP_REQUEST_TIMEOUT', 408],
      ['HPE_INVALID_METHOD', 400],
      ['HPE_INVALID_HEADER_TOKEN', 400],
      ['HPE_LF_EXPECTED', 400],
      ['HPE_CR_EXPECTED', 400],
      ['HPE_INVALID_TRANSFER_ENCODING', 400],
      ['HPE_UNEXPECTED_CONTENT_LENGTH', 400],
      ['HPE_SOMETHING_NEW', 400],
    ])('answers %s with invalid_request and status %d, as Node does', (code, status) => {
      const answer = clientErrorAnswer(parserError(code));

      expect(answer).toMatchObject({ kind: 'invalid_request', status, attempts: 0 });
      expect(answer?.message).not.toMatch(/secret|HPE_|ERR_/);
    });

    it.each(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', undefined])('answers nothing to %s: the peer is gone', (code) => {
      expect(clientErrorAnswer({ code })).toBeUndefined();
    });
  });

  it('writes a whole response: status line, JSON type, length and connection close', () => {
    const raw = rawEnvelopeResponse(new ResilienceError('invalid_request', 'a header is malformed'));

    const body =
      '{"error":{"kind":"invalid_request","message":"a header is malformed","attempts":0,"jsonrpcCode":-32600}}';
    expect(raw).toBe(
      'HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\n' +
        `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
  });

  describe('answerClientError', () => {
    it('answers a request timeout with 408 and closes the connection', async () => {
      const { server, received } = await pair();

      answerClientError(parserError('ERR_HTTP_REQUEST_TIMEOUT'), server);

      const text = await received;
      expect(text).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { kind: 'invalid_request', jsonrpcCode: -32600 },
      });
      expect(server.destroyed).toBe(true);
    });

    it('quotes neither the error message nor the raw packet', async () => {
      const { server, received } = await pair();

      answerClientError(parserError('HPE_INVALID_HEADER_TOKEN'), server);

      expect(await received).not.toMatch(/secret|Parse Error|HPE_/);
    });

    it('writes nothing after a connection reset, and closes the socket', async () => {
      const { server, received } = await pair();

      answerClientError(parserError('ECONNRESET'), server);

      expect(await received).toBe('');
      expect(server.destroyed).toBe(true);
    });

    it('writes nothing on a socket whose response headers are already sent', async () => {
      const { server, received } = await pair();
      Object.assign(server, { _httpMessage: { headersSent: true } });

      answerClientError(parserError('HPE_INVALID_CHUNK_SIZE'), server);

      expect(await received).toBe('');
      expect(server.destroyed).toBe(true);
    });

    it('answers on a socket whose in-flight response has not started', async () => {
      const { server, received } = await pair();
      Object.assign(server, { _httpMessage: { headersSent: false } });

      answerClientError(parserError('HPE_INVALID_CHUNK_SIZE'), server);

      expect(await received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    });

    it('leaves the response to a request that asked to close alone when more bytes follow it', async () => {
      const { server, received } = await pair();
      Object.assign(server, { _httpMessage: { headersSent: false } });

      answerClientError(parserError('HPE_CLOSED_CONNECTION'), server);

      expect(server.destroyed).toBe(false);
      server.end('the in-flight response');
      expect(await received).toBe('the in-flight response');
    });

    it('leaves a socket that is already destroyed alone', async () => {
      const { server, received } = await pair();
      server.destroy();

      expect(() => answerClientError(parserError('HPE_INVALID_METHOD'), server)).not.toThrow();
      expect(await received).toBe('');
    });
  });
});

import { connect } from 'node:net';
import { createTestApp, type TestApp } from '../support/create-app';
import { type ContractKind, expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { type Response, send } from '../support/http-client';

/** Placed in every malformed request; no answer may show it. */
const SECRET = 'probe-secret-7f3a';
const INVOKE = '/v1/tools/echo/invoke';
/** How long to wait for the server to close the connection; only a failing test waits this long. */
const GUARD_MS = 3000;

interface RawAnswer {
  /** Status lines of the interim (1xx) answers before the final one. */
  interim: string[];
  statusLine: string;
  response: Response;
  /** Whether the server closed the connection after its answer. */
  closed: boolean;
}

/**
 * Writes `raw` on a TCP connection of its own, byte for byte (no HTTP client would send these
 * requests), and reads what comes back until the server closes the connection.
 */
function exchange(url: string, raw: string, options: { halfClose?: boolean } = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    const guard = setTimeout(() => socket.destroy(), GUARD_MS);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => (closed = true));
    // A reset after the answer is how Node ends some of these connections; the answer still counts.
    socket.on('error', () => (closed = true));
    socket.on('close', () => {
      clearTimeout(guard);
      try {
        resolve(parseAnswer(Buffer.concat(chunks).toString('latin1'), closed));
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
    socket.write(raw, 'latin1');
    if (options.halfClose) socket.end();
  });
}

function parseAnswer(text: string, closed: boolean): RawAnswer {
  const interim: string[] = [];
  while (/^HTTP\/1\.1 1\d\d /.test(text)) {
    const end = text.indexOf('\r\n\r\n');
    interim.push(text.slice(0, text.indexOf('\r\n')));
    text = text.slice(end + 4);
  }
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) throw new Error(`no complete HTTP answer: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rawBody = text.slice(split + 4);
  expect(Number(headers['content-length'])).toBe(Buffer.byteLength(rawBody, 'latin1'));
  let body: unknown = rawBody;
  try {
    body = JSON.parse(rawBody);
  } catch {
    // Left as text: expectEnvelope then fails on it with the text in view.
  }
  return { interim, statusLine, response: { status: Number(statusLine.split(' ')[1]), headers, body }, closed };
}

function expectRawEnvelope(answer: RawAnswer, status: number, reason: string, kind: ContractKind) {
  expect(answer.statusLine).toBe(`HTTP/1.1 ${status} ${reason}`);
  expect(answer.response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(answer.response.headers.connection).toBe('close');
  expect(answer.closed).toBe(true);
  const error = expectEnvelope(answer.response, status, kind);
  expect(error.attempts).toBe(0);
  expectNothingLeaked(answer.response, SECRET, 'HPE_', 'FST_', 'ERR_');
  return error;
}

const json = 'Content-Type: application/json\r\n';

// The fixed messages, one per kind of fault; none says anything about the request itself.
const HEADER = 'a header is malformed';
const CRLF = 'a line does not end in CRLF';
const VERSION = 'the HTTP version is not valid or not supported';
const FRAMING = 'Content-Length or Transfer-Encoding is invalid or ambiguous';
const BODY = 'the request body is malformed or incomplete';
const METHOD = 'the request method is not valid';
const H2 = 'HTTP/2 is not served on this port';
const TARGET = 'the request target is not valid';
const MALFORMED = 'the request is malformed';
const HOST = 'HTTP/1.1 requests must have a Host header';
const TWO_HOSTS = 'a request must not have more than one Host header';

/**
 * Requests that Node's parser or HTTP layer refuses before any route runs are answered with the
 * envelope of docs/http-contract.md section 6 too, with the status Node would have given them,
 * on a response that closes the connection and quotes nothing from the request.
 */
describe('protocol errors get the error envelope', () => {
  let service: TestApp;

  beforeAll(async () => {
    service = await createTestApp({
      lanes: { main: { concurrency: 1, queueCapacity: 1 } },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
    });
  });

  afterAll(() => service.close());

  afterEach(async () => {
    const response = await send('GET', `${service.url}/health/live`);

    expect(response.status).toBe(200);
  });

  it.each([
    ['a header block over 16 KB', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${SECRET}${'a'.repeat(17_000)}\r\n\r\n`],
    ['a URL over 16 KB', `GET /${SECRET}${'u'.repeat(17_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
  ])('answers %s with 431 invalid_request', async (_case, raw) => {
    const answer = await exchange(service.url, raw);

    const error = expectRawEnvelope(answer, 431, 'Request Header Fields Too Large', 'invalid_request');
    expect(error.message).toBe('the request line and headers are larger than the limit');
  });

  it.each([
    ['a control character in a header value', `GET / HTTP/1.1\r\nHost: x\r\nX-Probe: ${SECRET}\x01\r\n\r\n`, HEADER],
    ['a control character in a header name', `GET / HTTP/1.1\r\nHost: x\r\nX-${SECRET}\x01: 1\r\n\r\n`, HEADER],
    ['a space before the colon of a header', `GET / HTTP/1.1\r\nHost: x\r\nX-Probe : ${SECRET}\r\n\r\n`, HEADER],
    ['a folded header line', `GET / HTTP/1.1\r\nHost: x\r\nX-Probe: a\r\n ${SECRET}\r\n\r\n`, HEADER],
    ['a bare LF ending a header line', `GET / HTTP/1.1\r\nHost: x\nX-Probe: ${SECRET}\r\n\r\n`, CRLF],
    ['a bare CR inside the headers', `GET / HTTP/1.1\r\nHost: x\rX-Probe: ${SECRET}\r\n\r\n`, CRLF],
    ['a bare LF ending the request line', `GET /${SECRET} HTTP/1.1\nHost: x\n\n`, VERSION],
    [
      'both Content-Length and Transfer-Encoding',
      `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 40\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      FRAMING,
    ],
    [
      'two different Content-Length headers',
      `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      FRAMING,
    ],
    [
      'a Content-Length that is not a number',
      `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: ${SECRET}\r\n\r\n`,
      FRAMING,
    ],
    [
      'a Transfer-Encoding that does not end in chunked',
      `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: gzip\r\n\r\n{}`,
      FRAMING,
    ],
    [
      'a chunk size that is not hexadecimal',
      `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: chunked\r\n\r\nzz\r\n{"arguments":"${SECRET}"}\r\n0\r\n\r\n`,
      BODY,
    ],
    ['an invalid method', `FOO${SECRET} / HTTP/1.1\r\nHost: x\r\n\r\n`, METHOD],
    ['a lower-case method', `get /${SECRET} HTTP/1.1\r\nHost: x\r\n\r\n`, METHOD],
    ['bytes that are not HTTP (a TLS hello)', `\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03${SECRET}`, METHOD],
    ['an HTTP/2 preface on the HTTP/1 port', `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n${SECRET}`, H2],
    ['an unknown HTTP version', `GET /${SECRET} HTTP/1.2\r\nHost: x\r\n\r\n`, VERSION],
    ['a control character in the URL', `GET /${SECRET}\x01 HTTP/1.1\r\nHost: x\r\n\r\n`, TARGET],
    ['a space in the URL', `GET /${SECRET} x HTTP/1.1\r\nHost: x\r\n\r\n`, MALFORMED],
    ['HTTP/1.1 without Host', `GET /v1/lanes?${SECRET} HTTP/1.1\r\nX-Probe: ${SECRET}\r\n\r\n`, HOST],
    ['two Host headers', `GET /v1/lanes HTTP/1.1\r\nHost: x\r\nhost: ${SECRET}\r\n\r\n`, TWO_HOSTS],
  ])('answers %s with 400 invalid_request', async (_case, raw, message) => {
    const answer = await exchange(service.url, raw);

    expect(expectRawEnvelope(answer, 400, 'Bad Request', 'invalid_request').message).toBe(message);
  });

  it('answers a body cut short by the client closing its side with 400 invalid_request', async () => {
    const raw = `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: chunked\r\n\r\n40\r\n{"arguments":"${SECRET}`;

    const answer = await exchange(service.url, raw, { halfClose: true });

    expect(expectRawEnvelope(answer, 400, 'Bad Request', 'invalid_request').message).toBe(BODY);
  });

  it('answers chunk extensions over the limit with 413 invalid_request', async () => {
    const raw = `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: chunked\r\n\r\n2;${SECRET}${'e'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`;

    const answer = await exchange(service.url, raw);

    const error = expectRawEnvelope(answer, 413, 'Payload Too Large', 'invalid_request');
    expect(error.message).toBe('chunk extensions are larger than the limit');
  });

  it('answers an Expect other than 100-continue with 417 invalid_request', async () => {
    const raw = `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 2\r\nExpect: 200-${SECRET}\r\n\r\n{}`;

    const answer = await exchange(service.url, raw);

    const error = expectRawEnvelope(answer, 417, 'Expectation Failed', 'invalid_request');
    expect(error.message).toBe('only Expect: 100-continue is supported');
  });

  it('answers CONNECT, which no route serves, with 404 not_found instead of dropping the connection', async () => {
    const answer = await exchange(
      service.url,
      `CONNECT ${SECRET}.example:443 HTTP/1.1\r\nHost: ${SECRET}.example:443\r\n\r\n`,
    );

    expect(expectRawEnvelope(answer, 404, 'Not Found', 'not_found').message).toBe('no such route');
  });

  describe('requests that are not errors', () => {
    it.each([
      ['another request', `GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n`],
      ['a stray CRLF', '\r\n'],
      ['bytes that are not HTTP', `${SECRET}\x01\x02`],
    ])('answers a request that asked to close the connection even when %s follows it', async (_case, tail) => {
      const raw = `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 16\r\nConnection: close\r\n\r\n{"arguments":{}}${tail}`;

      const answer = await exchange(service.url, raw);

      expect(answer.statusLine).toBe('HTTP/1.1 200 OK');
      expect(answer.response.body).toMatchObject({ toolId: 'echo', result: {} });
      expect(answer.closed).toBe(true);
    });

    it('serves HTTP/1.0 without Host', async () => {
      const answer = await exchange(service.url, 'GET /health/live HTTP/1.0\r\n\r\n');

      expect(answer.response.status).toBe(200);
    });

    it('serves Expect: 100-continue', async () => {
      const raw = `POST ${INVOKE} HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 16\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n{"arguments":{}}`;

      const answer = await exchange(service.url, raw);

      expect(answer.interim).toEqual(['HTTP/1.1 100 Continue']);
      expect(answer.response.status).toBe(200);
    });
  });
});

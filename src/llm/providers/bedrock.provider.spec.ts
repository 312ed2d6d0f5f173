import { createHash, createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { inspect } from 'node:util';
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { LazyAbortController } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { deferred } from '../../../test/support/deferred';
import { anthropicMessage } from '../../../test/support/llm-answers';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { noNetwork, providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { json, Upstream, type UpstreamHandler, type UpstreamRequest } from '../../../test/support/upstream';
import type { ChatChunk, ChatRequest } from '../chat.types';
import type { Environment } from './bedrock-credentials';
import { bedrockInvokeUrl } from './bedrock-request';
import { BedrockProvider } from './bedrock.provider';
import type { ProviderTarget } from './llm-provider';

const ACCESS_KEY_ID = 'AKIATESTBEDROCK0001';
const SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG+bedrockSECRET0001';
const SESSION_TOKEN = 'FwoGZXIvYXdzEBedrockSessionTOKEN+/=0001';
const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const PROFILE_ARN =
  'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0';

const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));
const AMZ_DATE = '20260501T120000Z';
const KEYS: Environment = { AWS_ACCESS_KEY_ID: ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY };

const loopback = loopbackUpstreams();
const { upstream } = loopback;

function target(server: Upstream | undefined, overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return {
    provider: 'bedrock',
    model: MODEL,
    region: 'eu-west-3',
    ...(server ? { baseUrl: server.url() } : {}),
    ...overrides,
  };
}

/** A Messages API answer as Bedrock gives it, with `overrides` over it. */
function message(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return anthropicMessage({ id: 'msg_bdrk_01', model: 'claude-3-5-haiku-20241022', ...overrides });
}

const HELLO: ChatRequest = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }] };

function only(server: Upstream): UpstreamRequest {
  expect(server.requests).toHaveLength(1);
  return server.requests[0];
}

// SigV4 written out from AWS's specification with node:crypto alone, so that the check does not
// share code (or a misreading) with aws4, the signer under test.

interface Authorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

function parseAuthorization(value: string | string[] | undefined): Authorization {
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([a-z0-9-]+)\/([a-z0-9-]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/.exec(
      String(value),
    );
  if (!match) throw new Error(`not a SigV4 Authorization header: ${String(value)}`);
  const [, accessKeyId, date, region, service, signedHeaders, signature] = match;
  return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(';'), signature };
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();

/** RFC 3986 percent-encoding: everything but unreserved characters. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The signature a request should carry, recomputed from what was received. */
function expectedSignature(request: UpstreamRequest, secretAccessKey: string, auth: Authorization): string {
  expect(request.path).not.toContain('?');
  // Every service but S3 encodes each path segment again: `%3A` in the path is `%253A` here.
  const canonicalUri = request.path.split('/').map(uriEncode).join('/');
  const canonicalHeaders = auth.signedHeaders
    .map(
      (name) =>
        `${name}:${String(request.headers[name] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonicalRequest = [
    request.method,
    canonicalUri,
    '',
    canonicalHeaders,
    auth.signedHeaders.join(';'),
    sha256(request.body),
  ].join('\n');
  const scope = `${auth.date}/${auth.region}/${auth.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', String(request.headers['x-amz-date']), scope, sha256(canonicalRequest)];
  const key = [auth.date, auth.region, auth.service, 'aws4_request'].reduce<string | Buffer>(
    (previous, part) => hmac(previous, part),
    `AWS4${secretAccessKey}`,
  );
  return hmac(key, stringToSign.join('\n')).toString('hex');
}

/** Everything an error says, its cause and own fields included, as a log line would print it. */
function everythingSaid(error: Error): string {
  return [String(error), error.message, error.stack, inspect(error, { depth: 6 }), JSON.stringify(error)].join('\n');
}

describe('the SigV4 check of this spec', () => {
  // AWS's Signature Version 4 test suite (2015-08-30), get-vanilla and post-vanilla.
  const vanilla = (method: string): UpstreamRequest => ({
    method,
    path: '/',
    headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z' },
    body: '',
    remotePort: 0,
  });
  const suite: Authorization = {
    accessKeyId: 'AKIDEXAMPLE',
    date: '20150830',
    region: 'us-east-1',
    service: 'service',
    signedHeaders: ['host', 'x-amz-date'],
    signature: '',
  };

  it("reproduces the test suite's signatures", () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY';

    expect(expectedSignature(vanilla('GET'), secret, suite)).toBe(
      '5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(expectedSignature(vanilla('POST'), secret, suite)).toBe(
      '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    );
  });
});

describe('BedrockProvider', () => {
  describe('the request', () => {
    it('posts the translated Messages body to /model/{encoded id}/invoke, with no model in it', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);
      const request: ChatRequest = {
        model: MODEL,
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'Hello' },
        ],
        max_completion_tokens: 300,
        temperature: 0.2,
        stop: 'END',
        seed: 3,
      };

      await provider.complete(providerAttempt(target(server), request, { pool: loopback.pool, maxOutputTokens: 300 }));

      const received = only(server);
      expect(received.method).toBe('POST');
      expect(received.path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke');
      expect(JSON.parse(received.body)).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 300,
        system: [{ type: 'text', text: 'You are terse.' }],
        messages: [{ role: 'user', content: 'Hello' }],
        temperature: 0.2,
        stop_sequences: ['END'],
      });
    });

    it('sends only its own headers, signed, and never a target apiKey or the client headers', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);

      await provider.complete(
        providerAttempt(
          target(server, { apiKey: 'sk-not-for-bedrock' }),
          { ...HELLO, extra_headers: { 'x-secret': '1' } },
          { pool: loopback.pool },
        ),
      );

      const { headers } = only(server);
      expect(Object.keys(headers).sort()).toEqual(
        ['accept', 'authorization', 'connection', 'content-length', 'content-type', 'host', 'x-amz-date'].sort(),
      );
      expect(headers['content-type']).toBe('application/json');
      expect(headers.accept).toBe('application/json');
      expect(headers['x-amz-date']).toBe(AMZ_DATE);
      expect(JSON.stringify(headers)).not.toContain('sk-not-for-bedrock');
    });

    it('signs with SigV4 for bedrock in the target region, and the signature verifies', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);

      await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      const received = only(server);
      const auth = parseAuthorization(received.headers.authorization);
      expect(auth).toMatchObject({ accessKeyId: ACCESS_KEY_ID, date: '20260501', region: 'eu-west-3' });
      expect(auth.service).toBe('bedrock');
      expect(auth.signedHeaders).toEqual(['accept', 'content-length', 'content-type', 'host', 'x-amz-date']);
      expect(received.headers['x-amz-security-token']).toBeUndefined();
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
    });

    it('sends and signs the session token of temporary credentials', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, { ...KEYS, AWS_SESSION_TOKEN: SESSION_TOKEN });

      await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      const received = only(server);
      const auth = parseAuthorization(received.headers.authorization);
      expect(received.headers['x-amz-security-token']).toBe(SESSION_TOKEN);
      expect(auth.signedHeaders).toEqual([
        'accept',
        'content-length',
        'content-type',
        'host',
        'x-amz-date',
        'x-amz-security-token',
      ]);
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
    });

    it('encodes an inference profile ARN as one path segment, and signs that path', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);

      await provider.complete(providerAttempt(target(server, { model: PROFILE_ARN }), HELLO, { pool: loopback.pool }));

      const received = only(server);
      expect(received.path).toBe(
        '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
      );
      const auth = parseAuthorization(received.headers.authorization);
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
    });

    it('has a signature that a changed body, path, date or key does not verify', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);

      await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      const received = only(server);
      const auth = parseAuthorization(received.headers.authorization);
      const changed: UpstreamRequest[] = [
        { ...received, body: received.body.replace('Hello', 'Hellp') },
        { ...received, path: received.path.replace('haiku', 'sonnet') },
        { ...received, headers: { ...received.headers, 'x-amz-date': '20260501T120001Z' } },
      ];
      for (const request of changed)
        expect(expectedSignature(request, SECRET_ACCESS_KEY, auth)).not.toBe(auth.signature);
      expect(expectedSignature(received, `${SECRET_ACCESS_KEY}x`, auth)).not.toBe(auth.signature);
    });

    it.each([
      ['the target region first', { region: 'ap-south-1' }, { AWS_REGION: 'us-west-2' }, 'ap-south-1'],
      [
        'AWS_REGION without one',
        { region: undefined },
        { AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'eu-central-1' },
        'us-west-2',
      ],
      ['AWS_DEFAULT_REGION last', { region: undefined }, { AWS_DEFAULT_REGION: 'eu-central-1' }, 'eu-central-1'],
    ] as Array<[string, Partial<ProviderTarget>, Environment, string]>)(
      'signs for %s',
      async (_name, overrides, env, region) => {
        const server = await upstream(json(200, message()));
        const provider = new BedrockProvider(clock, { ...KEYS, ...env });

        await provider.complete(providerAttempt(target(server, overrides), HELLO, { pool: loopback.pool }));

        const received = only(server);
        const auth = parseAuthorization(received.headers.authorization);
        expect(auth.region).toBe(region);
        expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
      },
    );

    it('reads the environment on every request, so a rotated session token is used at once', async () => {
      const server = await upstream(json(200, message()));
      const env: Record<string, string> = { ...KEYS, AWS_SESSION_TOKEN: SESSION_TOKEN };
      const provider = new BedrockProvider(clock, env);
      await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      Object.assign(env, { AWS_SECRET_ACCESS_KEY: 'rotatedSecret', AWS_SESSION_TOKEN: 'rotatedToken' });
      await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      const second = server.requests[1];
      const auth = parseAuthorization(second.headers.authorization);
      expect(second.headers['x-amz-security-token']).toBe('rotatedToken');
      expect(auth.signature).toBe(expectedSignature(second, 'rotatedSecret', auth));
    });

    it("goes to the region's runtime endpoint without a base URL", () => {
      expect(bedrockInvokeUrl(target(undefined, { region: 'us-east-1' }), 'us-east-1')).toBe(
        'https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/invoke',
      );
      expect(bedrockInvokeUrl(target(undefined, { model: 'm' }), 'cn-north-1')).toBe(
        'https://bedrock-runtime.cn-north-1.amazonaws.com.cn/model/m/invoke',
      );
    });

    it('refuses an untranslatable request as invalid_request before sending', async () => {
      const server = await upstream(json(200, message()));
      const provider = new BedrockProvider(clock, KEYS);

      const error = await rejection(
        provider.complete(providerAttempt(target(server), { ...HELLO, n: 2 }, { pool: loopback.pool })),
      );

      expect(error).toMatchObject({ kind: 'invalid_request', code: 'unsupported_request' });
      expect(server.requests).toHaveLength(0);
    });
  });

  describe('the answer', () => {
    it('translates the Messages answer into a chat.completion', async () => {
      const server = await upstream(
        json(
          200,
          message({
            content: [
              { type: 'text', text: 'Checking.' },
              { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
            ],
            stop_reason: 'tool_use',
            usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 5 },
          }),
        ),
      );
      const provider = new BedrockProvider(clock, KEYS);

      const completion = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(completion).toEqual({
        id: 'msg_bdrk_01',
        object: 'chat.completion',
        created: Math.floor(clock.wallNow() / 1000),
        model: 'claude-3-5-haiku-20241022',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Checking.',
              refusal: null,
              tool_calls: [
                { id: 'toolu_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
              ],
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: {
          prompt_tokens: 25,
          completion_tokens: 7,
          total_tokens: 32,
          prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
        },
      });
    });

    it("names the target's model id when the answer has no model", async () => {
      const answer = message();
      delete answer.model;
      const server = await upstream(json(200, answer));
      const provider = new BedrockProvider(clock, KEYS);

      const completion = await provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool }));

      expect(completion.model).toBe(MODEL);
      expect(completion.choices[0]).toMatchObject({ message: { content: 'Hi.' }, finish_reason: 'stop' });
    });

    it('reads an answer that is not a Messages answer as transient', async () => {
      const server = await upstream(json(200, { output: 'x' }));
      const provider = new BedrockProvider(clock, KEYS);

      const error = await rejection(provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool })));

      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
    });
  });

  describe('failures', () => {
    /** status, x-amzn-errortype → kind, code: Bedrock's InvokeModel errors written out. */
    it.each([
      [400, 'ValidationException', 'invalid_request', 'bad_request'],
      [400, 'ServiceQuotaExceededException', 'unavailable', 'insufficient_quota'],
      [403, 'AccessDeniedException', 'unavailable', 'forbidden'],
      [403, 'UnrecognizedClientException', 'unavailable', 'unauthorized'],
      [403, 'InvalidSignatureException', 'unavailable', 'unauthorized'],
      [403, 'ExpiredTokenException', 'unavailable', 'unauthorized'],
      [404, 'ResourceNotFoundException', 'unavailable', 'model_not_found'],
      [408, 'ModelTimeoutException', 'transient', 'upstream_timeout'],
      [424, 'ModelErrorException', 'transient', 'upstream_error'],
      [429, 'ThrottlingException', 'transient', 'rate_limited'],
      [429, 'ModelNotReadyException', 'transient', 'overloaded'],
      [500, 'InternalServerException', 'transient', 'upstream_error'],
      [503, 'ServiceUnavailableException', 'transient', 'overloaded'],
      [503, 'ModelNotReadyException', 'transient', 'overloaded'],
    ])('maps %i %s to %s / %s', async (status, type, kind, code) => {
      const server = await upstream(
        json(
          status,
          { message: `detail with ${SECRET_ACCESS_KEY}` },
          { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
        ),
      );
      const provider = new BedrockProvider(clock, KEYS);

      const error = await rejection(provider.complete(providerAttempt(target(server), HELLO, { pool: loopback.pool })));

      expect(error).toMatchObject({ kind, code, upstreamStatus: status });
      expect(error.message).toMatch(new RegExp(`^target bedrock/${MODEL} answered ${status}: .+ \\(${type}\\)$`));
      expect(error.message).not.toContain('detail');
    });

    it.each([
      ['no keys', {}, 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set'],
      ['no key id', { AWS_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY }, 'AWS_ACCESS_KEY_ID is not set'],
      [
        'an empty secret',
        { AWS_ACCESS_KEY_ID: ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: SESSION_TOKEN },
        'AWS_SECRET_ACCESS_KEY is not set',
      ],
      ['no region', { ...KEYS }, 'no region: the target has none, and AWS_REGION and AWS_DEFAULT_REGION are not set'],
      [
        'an empty region',
        { ...KEYS, AWS_REGION: '' },
        'no region: the target has none, and AWS_REGION and AWS_DEFAULT_REGION are not set',
      ],
      ['a region that is not one', { ...KEYS, AWS_REGION: 'evil.example/x' }, 'AWS_REGION is not an AWS region'],
      [
        'a default region that is not one',
        { ...KEYS, AWS_DEFAULT_REGION: 'US_EAST' },
        'AWS_DEFAULT_REGION is not an AWS region',
      ],
    ] as Array<[string, Environment, string]>)(
      'refuses to send with %s, as unavailable / missing_credentials',
      async (_name, env, reason) => {
        const provider = new BedrockProvider(clock, env);

        const error = await rejection(
          provider.complete(providerAttempt(target(undefined, { region: undefined }), HELLO, { http: noNetwork })),
        );

        expect(error).toMatchObject({ kind: 'unavailable', code: 'missing_credentials' });
        expect(error.message).toBe(`target bedrock/${MODEL} cannot sign its requests: ${reason}`);
        expect(everythingSaid(error)).not.toContain(SECRET_ACCESS_KEY);
        expect(everythingSaid(error)).not.toContain(SESSION_TOKEN);
        expect(everythingSaid(error)).not.toContain('evil');
      },
    );

    it('never says the secret key, the session token or the Authorization header in an error', async () => {
      const env = { ...KEYS, AWS_SESSION_TOKEN: SESSION_TOKEN };
      const provider = new BedrockProvider(clock, env);
      const refusing = await upstream(
        json(
          403,
          { message: `The security token ${SESSION_TOKEN} is invalid` },
          {
            'x-amzn-errortype': 'UnrecognizedClientException',
          },
        ),
      );
      const failing = await upstream(
        json(424, { message: SECRET_ACCESS_KEY }, { 'x-amzn-errortype': 'ModelErrorException' }),
      );
      const gone = await Upstream.start();
      const goneUrl = gone.url();
      await gone.close();

      const errors = [
        await rejection(provider.complete(providerAttempt(target(refusing), HELLO, { pool: loopback.pool }))),
        await rejection(provider.complete(providerAttempt(target(failing), HELLO, { pool: loopback.pool }))),
        await rejection(
          provider.complete(providerAttempt(target(undefined, { baseUrl: goneUrl }), HELLO, { pool: loopback.pool })),
        ),
        await rejection(
          provider.complete(providerAttempt(target(refusing), { ...HELLO, n: 3 }, { pool: loopback.pool })),
        ),
      ];

      const authorizations = [...refusing.requests, ...failing.requests].map((request) =>
        String(request.headers.authorization),
      );
      expect(authorizations).toHaveLength(2);
      expect(errors.map((error) => (error as { code?: string }).code)).toEqual([
        'unauthorized',
        'upstream_error',
        'unreachable',
        'unsupported_request',
      ]);
      for (const error of errors) {
        const said = everythingSaid(error);
        expect(said).not.toContain(SECRET_ACCESS_KEY);
        expect(said).not.toContain(SESSION_TOKEN);
        for (const authorization of authorizations) {
          expect(said).not.toContain(authorization);
          expect(said).not.toContain(parseAuthorization(authorization).signature);
        }
      }
    });
  });

  describe('streaming', () => {
    const codec = new EventStreamCodec(toUtf8, fromUtf8);
    const text = (value: string) => ({ type: 'string' as const, value });
    const frame = (headers: MessageHeaders, body: string) =>
      Buffer.from(codec.encode({ headers, body: fromUtf8(body) }));
    /** One Anthropic stream event in a `chunk` message, as InvokeModelWithResponseStream sends it. */
    const chunkFrame = (event: unknown) =>
      frame(
        { ':event-type': text('chunk'), ':content-type': text('application/json'), ':message-type': text('event') },
        JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }),
      );
    const exceptionFrame = (type: string) =>
      frame(
        {
          ':exception-type': text(type),
          ':content-type': text('application/json'),
          ':message-type': text('exception'),
        },
        JSON.stringify({ message: `detail with ${SECRET_ACCESS_KEY}` }),
      );

    const START = {
      type: 'message_start',
      message: {
        id: 'msg_bdrk_s1',
        type: 'message',
        role: 'assistant',
        model: 'claude-3-5-haiku-20241022',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 20, cache_read_input_tokens: 5, output_tokens: 1 },
      },
    };
    const TEXT_START = { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } };
    const delta = (piece: string) => ({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: piece },
    });
    const TEXT_STREAM = [
      START,
      TEXT_START,
      delta('Hello'),
      delta(' there.'),
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 6 } },
      {
        type: 'message_stop',
        'amazon-bedrock-invocationMetrics': { inputTokenCount: 25, outputTokenCount: 6, invocationLatency: 300 },
      },
    ];

    const startStream = (response: ServerResponse) =>
      response.writeHead(200, {
        'content-type': 'application/vnd.amazon.eventstream',
        'x-amzn-bedrock-content-type': 'application/json',
      });
    /** A handler writing each of `writes` in turn, then ending the answer. */
    const streamed =
      (...writes: Buffer[]): UpstreamHandler =>
      (_request, response) => {
        startStream(response);
        for (const piece of writes) response.write(piece);
        response.end();
      };
    /** A handler writing `frames`, then holding the answer open; `onClose` hears the client go. */
    const heldOpen =
      (onClose: () => void, ...frames: Buffer[]): UpstreamHandler =>
      (_request, response) => {
        response.on('close', onClose);
        startStream(response);
        response.write(Buffer.concat(frames));
      };

    /** What reading the stream threw, and the chunks before it. */
    async function failure(chunks: AsyncIterable<ChatChunk>): Promise<{ error: Error; before: ChatChunk[] }> {
      const before: ChatChunk[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of chunks) before.push(chunk);
        })(),
      );
      return { error, before };
    }

    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id: 'msg_bdrk_s1',
      object: 'chat.completion.chunk',
      created: Math.floor(clock.wallNow() / 1000),
      model: 'claude-3-5-haiku-20241022',
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
      usage: null,
    });

    it('posts the invoke body to /invoke-with-response-stream, signed, asking for an event stream', async () => {
      const server = await upstream(streamed(...TEXT_STREAM.map(chunkFrame)));
      const provider = new BedrockProvider(clock, { ...KEYS, AWS_SESSION_TOKEN: SESSION_TOKEN });

      for await (const _chunk of provider.stream(
        providerAttempt(target(server, { model: PROFILE_ARN }), HELLO, { pool: loopback.pool }),
      ));

      const received = only(server);
      expect(received.path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/invoke-with-response-stream`);
      expect(received.headers.accept).toBe('application/vnd.amazon.eventstream');
      expect(JSON.parse(received.body)).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        max_tokens: 256,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const auth = parseAuthorization(received.headers.authorization);
      expect(auth).toMatchObject({ accessKeyId: ACCESS_KEY_ID, region: 'eu-west-3', service: 'bedrock' });
      expect(auth.signedHeaders).toEqual([
        'accept',
        'content-length',
        'content-type',
        'host',
        'x-amz-date',
        'x-amz-security-token',
      ]);
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
    });

    it('translates the stream whole, its messages cut across writes', async () => {
      const [first, second, ...rest] = TEXT_STREAM.map(chunkFrame);
      const half = Math.floor(second.length / 2);
      const gate = deferred<void>();
      const server = await upstream(async (_request, response) => {
        startStream(response);
        response.write(Buffer.concat([first, second.subarray(0, half)]));
        // The rest only once the first chunk was read: the second message surely comes in two reads.
        await gate.promise;
        response.write(second.subarray(half, half + 3));
        response.end(Buffer.concat([second.subarray(half + 3), ...rest]));
      });
      const provider = new BedrockProvider(clock, KEYS);

      const chunks: ChatChunk[] = [];
      for await (const piece of provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool }))) {
        chunks.push(piece);
        gate.resolve();
      }

      expect(chunks).toEqual([
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: 'Hello' }),
        chunk({ content: ' there.' }),
        chunk({}, 'stop'),
        {
          ...chunk({}),
          choices: [],
          usage: {
            prompt_tokens: 25,
            completion_tokens: 6,
            total_tokens: 31,
            prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
          },
        },
      ]);
    });

    it('fails mid-stream on an exception message, as the failure its type names', async () => {
      const server = await upstream(
        streamed(
          chunkFrame(START),
          chunkFrame(TEXT_START),
          chunkFrame(delta('Hel')),
          exceptionFrame('throttlingException'),
        ),
      );
      const provider = new BedrockProvider(clock, KEYS);

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toEqual([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' })]);
      expect(error).toMatchObject({ kind: 'transient', code: 'rate_limited', upstreamStatus: 429 });
      expect(error.message).toBe(`target bedrock/${MODEL} answered 429: rate limited (ThrottlingException)`);
      expect(everythingSaid(error)).not.toContain(SECRET_ACCESS_KEY);
    });

    it.each([
      [429, 'ThrottlingException', 'transient', 'rate_limited'],
      [424, 'ModelErrorException', 'transient', 'upstream_error'],
      [403, 'ExpiredTokenException', 'unavailable', 'unauthorized'],
    ])('fails on a %i %s before the stream as %s / %s', async (status, type, kind, code) => {
      const server = await upstream(json(status, { message: 'detail' }, { 'x-amzn-errortype': type }));
      const provider = new BedrockProvider(clock, KEYS);

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toEqual([]);
      expect(error).toMatchObject({ kind, code, upstreamStatus: status });
    });

    it('fails as stream_cut when the answer ends before message_stop', async () => {
      const server = await upstream(streamed(...TEXT_STREAM.slice(0, -1).map(chunkFrame)));
      const provider = new BedrockProvider(clock, KEYS);

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toHaveLength(4);
      expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    });

    it('fails as stream_cut when the answer ends inside a message', async () => {
      const last = chunkFrame(TEXT_STREAM[TEXT_STREAM.length - 1]);
      const server = await upstream(
        streamed(...TEXT_STREAM.slice(0, -1).map(chunkFrame), last.subarray(0, last.length - 4)),
      );
      const provider = new BedrockProvider(clock, KEYS);

      const { error } = await failure(provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })));

      expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
    });

    it('fails as bad_response on a message larger than the limit, without waiting for it', async () => {
      const prelude = Buffer.alloc(12);
      prelude.writeUInt32BE(2 * 1024 * 1024, 0);
      const closed = deferred<void>();
      const server = await upstream(heldOpen(() => closed.resolve(), chunkFrame(START), prelude));
      const provider = new BedrockProvider(clock, KEYS);

      const { error, before } = await failure(
        provider.stream(providerAttempt(target(server), HELLO, { pool: loopback.pool })),
      );

      expect(before).toHaveLength(1);
      expect(error).toMatchObject({ kind: 'transient', code: 'bad_response' });
      await closed.promise;
    });

    it('stops the request when the attempt is aborted mid-stream, with the abort reason', async () => {
      const closed = deferred<void>();
      const server = await upstream(heldOpen(() => closed.resolve(), chunkFrame(START)));
      const provider = new BedrockProvider(clock, KEYS);
      const abort = new LazyAbortController();
      const reading = provider
        .stream(providerAttempt(target(server), HELLO, { pool: loopback.pool, abort }))
        [Symbol.asyncIterator]();
      expect((await reading.next()).value).toEqual(chunk({ role: 'assistant', content: '' }));
      const reason = new Error('attempt timed out');

      abort.abort(reason);

      await expect(reading.next()).rejects.toBe(reason);
      await closed.promise;
      expect(server.abandoned).toBe(1);
    });

    it('closes the connection when the reader stops early', async () => {
      const closed = deferred<void>();
      const server = await upstream(
        heldOpen(() => closed.resolve(), chunkFrame(START), chunkFrame(TEXT_START), chunkFrame(delta('Hel'))),
      );
      const provider = new BedrockProvider(clock, KEYS);
      const reading = provider
        .stream(providerAttempt(target(server), HELLO, { pool: loopback.pool }))
        [Symbol.asyncIterator]();
      await reading.next();

      await reading.return?.(undefined);

      await closed.promise;
      expect(server.abandoned).toBe(1);
      expect(loopback.pool.snapshot().active).toBe(0);
    });

    it('refuses to send without credentials', async () => {
      const provider = new BedrockProvider(clock, {});

      const { error } = await failure(provider.stream(providerAttempt(target(undefined), HELLO, { http: noNetwork })));

      expect(error).toMatchObject({ kind: 'unavailable', code: 'missing_credentials' });
    });
  });

  describe('a request as it came in the Messages API', () => {
    const THINKING = { type: 'thinking', thinking: 'Greet back.', signature: 'sig-1' };
    const passThrough = {
      format: 'anthropic-messages' as const,
      body: {
        max_tokens: 4096,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: [{ type: 'text', text: 'Be warm.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hello' }],
        metadata: { user_id: 'end-user-7' },
        service_tier: 'auto',
      },
      betas: ['interleaved-thinking-2025-05-14'],
      extraInputTokens: 0,
    };
    const nativeAttempt = (server: Upstream) => ({
      ...providerAttempt(target(server), HELLO, { pool: loopback.pool, maxOutputTokens: 2048 }),
      passThrough,
    });

    it("sends the client's body for InvokeModel: the betas in it, its output cap held, what Bedrock refuses left out", async () => {
      const answer = message({ content: [THINKING, { type: 'text', text: 'Hi.' }] });
      const server = await upstream(json(200, answer));

      const completion = await new BedrockProvider(clock, KEYS).complete(nativeAttempt(server));

      const received = only(server);
      expect(JSON.parse(received.body)).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        anthropic_beta: ['interleaved-thinking-2025-05-14'],
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: [{ type: 'text', text: 'Be warm.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const auth = parseAuthorization(received.headers.authorization);
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
      expect(completion.passThroughAnswer).toEqual(answer);
      expect(completion.choices[0].message.content).toBe('Hi.');
    });

    it('counts the tokens of that body with CountTokens, signed, and answers its count', async () => {
      const server = await upstream(json(200, { inputTokens: 17 }));

      const counted = await new BedrockProvider(clock, KEYS).countTokens(nativeAttempt(server));

      const received = only(server);
      expect(received.path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/count-tokens');
      const { input } = JSON.parse(received.body) as { input: { invokeModel: { body: string } } };
      expect(JSON.parse(Buffer.from(input.invokeModel.body, 'base64').toString('utf8'))).toMatchObject({
        anthropic_version: 'bedrock-2023-05-31',
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Hello' }],
      });
      const auth = parseAuthorization(received.headers.authorization);
      expect(auth.signature).toBe(expectedSignature(received, SECRET_ACCESS_KEY, auth));
      expect(counted).toBe(17);
    });

    it('fails a count answer without a count as a malformed answer', async () => {
      const server = await upstream(json(200, { tokens: 'many' }));

      const error = await rejection(new BedrockProvider(clock, KEYS).countTokens(nativeAttempt(server)));

      expect(error).toMatchObject({ kind: 'transient' });
    });
  });
});

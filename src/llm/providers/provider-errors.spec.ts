import { isResilienceError, ResilienceError } from '../../common';
import {
  isProviderFailure,
  malformedAnswerError,
  missingCredentialsError,
  ProviderFailure,
  providerStatusError,
  networkError,
  unsupportedRequestError,
} from './provider-errors';

const TARGET = { provider: 'openai', model: 'gpt-4o-mini' };
const NOW_MS = Date.UTC(2026, 0, 1);

const quotaOpenAi = {
  error: {
    message: 'You exceeded your current quota',
    type: 'insufficient_quota',
    param: null,
    code: 'insufficient_quota',
  },
};
const quotaByType = { error: { message: 'quota', type: 'insufficient_quota', param: null, code: null } };
const spendLimit = {
  type: 'error',
  error: { type: 'rate_limit_error', message: 'spend limit', details: { error_code: 'enforced_spend_limit_reached' } },
};
const rateLimit = {
  error: { message: 'Rate limit reached', type: 'rate_limit_error', param: null, code: 'rate_limit_exceeded' },
};

/** status, body, headers → kind, code, retryAfterMs: the mapping written out, not derived. */
const TABLE: Array<[number, unknown, Record<string, string>, string, string, number | undefined]> = [
  [429, quotaOpenAi, { 'retry-after': '5' }, 'unavailable', 'insufficient_quota', undefined],
  [429, quotaByType, {}, 'unavailable', 'insufficient_quota', undefined],
  [429, spendLimit, { 'retry-after': '5' }, 'unavailable', 'insufficient_quota', undefined],
  [
    402,
    { type: 'error', error: { type: 'billing_error', message: 'billing' } },
    {},
    'unavailable',
    'insufficient_quota',
    undefined,
  ],
  [429, rateLimit, { 'retry-after': '7' }, 'transient', 'rate_limited', 7_000],
  [429, undefined, { 'retry-after-ms': '1500.2' }, 'transient', 'rate_limited', 1_501],
  [429, rateLimit, { 'retry-after-ms': '250', 'retry-after': '9' }, 'transient', 'rate_limited', 250],
  [429, rateLimit, { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, 'transient', 'rate_limited', 30_000],
  [429, rateLimit, { 'retry-after': 'soon' }, 'transient', 'rate_limited', undefined],
  [408, undefined, {}, 'transient', 'upstream_timeout', undefined],
  [409, undefined, {}, 'transient', 'upstream_error', undefined],
  [500, { type: 'error', error: { type: 'api_error', message: 'x' } }, {}, 'transient', 'upstream_error', undefined],
  [502, undefined, { 'retry-after': '2' }, 'transient', 'upstream_error', 2_000],
  [503, undefined, { 'retry-after': '3' }, 'transient', 'overloaded', 3_000],
  [504, undefined, {}, 'transient', 'upstream_timeout', undefined],
  [
    529,
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    {},
    'transient',
    'overloaded',
    undefined,
  ],
  [
    400,
    { error: { message: 'bad', type: 'invalid_request_error', param: 'x', code: null } },
    {},
    'invalid_request',
    'bad_request',
    undefined,
  ],
  [
    400,
    { error: { message: 'long', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
    {},
    'invalid_request',
    'context_length_exceeded',
    undefined,
  ],
  [
    400,
    {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
    },
    {},
    'invalid_request',
    'context_length_exceeded',
    undefined,
  ],
  [
    400,
    {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length',
      },
    },
    {},
    'invalid_request',
    'context_length_exceeded',
    undefined,
  ],
  [
    400,
    { message: 'Input is too long for requested model.' },
    { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
    'invalid_request',
    'context_length_exceeded',
    undefined,
  ],
  [
    400,
    { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } },
    {},
    'invalid_request',
    'bad_request',
    undefined,
  ],
  [413, undefined, { 'retry-after': '1' }, 'invalid_request', 'request_too_large', undefined],
  [422, undefined, {}, 'invalid_request', 'bad_request', undefined],
  [401, undefined, {}, 'unavailable', 'unauthorized', undefined],
  [403, undefined, {}, 'unavailable', 'forbidden', undefined],
  [404, undefined, {}, 'unavailable', 'model_not_found', undefined],
  [405, undefined, {}, 'unavailable', 'upstream_refused', undefined],
  [418, undefined, {}, 'unavailable', 'upstream_refused', undefined],
  [302, undefined, {}, 'transient', 'upstream_error', undefined],
  [200, undefined, {}, 'transient', 'bad_response', undefined],
];

describe('providerStatusError', () => {
  it.each(TABLE)('maps %i (%j, headers %j) to %s / %s', (status, body, headers, kind, code, retryAfterMs) => {
    const error = providerStatusError(TARGET, { status, headers, body }, NOW_MS);

    expect(error).toBeInstanceOf(ProviderFailure);
    expect(isResilienceError(error)).toBe(true);
    expect(error).toMatchObject({ kind, code, retryAfterMs });
  });

  it('names the target and the status, never the body', () => {
    const body = { error: { message: 'secret detail sk-live-123 at https://internal.example', type: 'x', code: 'y' } };

    const error = providerStatusError(TARGET, { status: 503, headers: {}, body }, NOW_MS);

    expect(error.message).toBe('target openai/gpt-4o-mini answered 503: it is overloaded');
    expect(error.upstreamStatus).toBe(503);
  });

  it('answers with the kind status of the contract, not the upstream one', () => {
    expect(providerStatusError(TARGET, { status: 529, headers: {}, body: undefined }, NOW_MS).status).toBe(502);
    expect(providerStatusError(TARGET, { status: 401, headers: {}, body: undefined }, NOW_MS).status).toBe(503);
  });
});

describe('ProviderFailure', () => {
  it('keeps its code and upstream status when the attempts are counted', () => {
    const error = providerStatusError(
      TARGET,
      { status: 429, headers: { 'retry-after': '2' }, body: rateLimit },
      NOW_MS,
    );

    const counted = error.withAttempts(3);

    expect(isProviderFailure(counted)).toBe(true);
    expect(counted).toMatchObject({ kind: 'transient', code: 'rate_limited', attempts: 3, retryAfterMs: 2_000 });
    expect(counted.upstreamStatus).toBe(429);
    expect(counted.message).toBe(error.message);
    expect(counted.name).toBe('ProviderFailure');
  });

  it('is told apart from a plain ResilienceError', () => {
    expect(isProviderFailure(new ResilienceError('transient', 'x'))).toBe(false);
  });
});

describe('the other provider failures', () => {
  it('reads an unreadable 2xx body as transient', () => {
    expect(malformedAnswerError(TARGET, 200)).toMatchObject({ kind: 'transient', code: 'bad_response' });
  });

  it('names a network error by its code only, never by its message', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:443'), { code: 'ECONNREFUSED' });

    const error = networkError(TARGET, cause);

    expect(error).toMatchObject({ kind: 'transient', code: 'unreachable', cause });
    expect(error.message).toBe('target openai/gpt-4o-mini could not be reached (ECONNREFUSED)');
  });

  it('tells the pool socket timeouts apart from a target that cannot be reached', () => {
    for (const code of ['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']) {
      const error = networkError(TARGET, Object.assign(new Error('Headers Timeout Error'), { code }));

      expect(error).toMatchObject({ kind: 'transient', code: 'upstream_timeout' });
      expect(error.message).toBe(`target openai/gpt-4o-mini did not answer in time (${code})`);
    }
  });

  it('leaves out a code that does not look like one', () => {
    const error = networkError(TARGET, Object.assign(new Error('x'), { code: 'https://a.example/x' }));

    expect(error.message).toBe('target openai/gpt-4o-mini could not be reached');
  });

  it('refuses an untranslatable request as invalid_request', () => {
    expect(unsupportedRequestError(TARGET, 'n must be 1')).toMatchObject({
      kind: 'invalid_request',
      code: 'unsupported_request',
      message: 'target openai/gpt-4o-mini cannot take this request: n must be 1',
    });
  });
});

describe('AWS error types (Bedrock)', () => {
  const BEDROCK = { provider: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0' };
  const typed = (type: string, extra: Record<string, string> = {}) => ({
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    ...extra,
  });

  /** status, x-amzn-errortype → kind, code, retryAfterMs. */
  const AWS_TABLE: Array<[number, string, string, string, number | undefined]> = [
    [424, 'ModelErrorException', 'transient', 'upstream_error', 4_000],
    [424, 'ModelStreamErrorException', 'transient', 'upstream_error', 4_000],
    [429, 'ModelNotReadyException', 'transient', 'overloaded', 4_000],
    [503, 'ModelNotReadyException', 'transient', 'overloaded', 4_000],
    [400, 'ServiceQuotaExceededException', 'unavailable', 'insufficient_quota', undefined],
    [403, 'UnrecognizedClientException', 'unavailable', 'unauthorized', undefined],
    [403, 'InvalidSignatureException', 'unavailable', 'unauthorized', undefined],
    [400, 'IncompleteSignatureException', 'unavailable', 'unauthorized', undefined],
    [403, 'ExpiredTokenException', 'unavailable', 'unauthorized', undefined],
    // The rest go by their status.
    [400, 'ValidationException', 'invalid_request', 'bad_request', undefined],
    [403, 'AccessDeniedException', 'unavailable', 'forbidden', undefined],
    [404, 'ResourceNotFoundException', 'unavailable', 'model_not_found', undefined],
    [408, 'ModelTimeoutException', 'transient', 'upstream_timeout', 4_000],
    [429, 'ThrottlingException', 'transient', 'rate_limited', 4_000],
    [500, 'InternalServerException', 'transient', 'upstream_error', 4_000],
    [503, 'ServiceUnavailableException', 'transient', 'overloaded', 4_000],
  ];

  it.each(AWS_TABLE)('maps %i %s to %s / %s', (status, type, kind, code, retryAfterMs) => {
    const headers = typed(type, { 'retry-after': '4' });

    const error = providerStatusError(BEDROCK, { status, headers, body: { message: 'm' } }, NOW_MS);

    expect(error).toMatchObject({ kind, code, retryAfterMs, upstreamStatus: status });
  });

  it('names the type in the message, never the body', () => {
    const body = { message: 'secret detail at https://internal.example' };

    const error = providerStatusError(BEDROCK, { status: 424, headers: typed('ModelErrorException'), body }, NOW_MS);

    expect(error.message).toBe(
      'target bedrock/anthropic.claude-3-5-haiku-20241022-v1:0 answered 424: the model failed (ModelErrorException)',
    );
  });

  it('leaves out a type that does not look like one, and then goes by the status', () => {
    const headers = { 'x-amzn-errortype': 'Model Error <script>' };

    const error = providerStatusError(BEDROCK, { status: 424, headers, body: undefined }, NOW_MS);

    expect(error).toMatchObject({ kind: 'unavailable', code: 'upstream_refused' });
    expect(error.message).toBe(
      'target bedrock/anthropic.claude-3-5-haiku-20241022-v1:0 answered 424: it refused the target',
    );
  });

  it('reads a 424 without the header as any other 4xx', () => {
    expect(providerStatusError(TARGET, { status: 424, headers: {}, body: undefined }, NOW_MS)).toMatchObject({
      kind: 'unavailable',
      code: 'upstream_refused',
    });
  });
});

describe('missingCredentialsError', () => {
  it('is unavailable, names what is missing and nothing else', () => {
    const error = missingCredentialsError({ provider: 'bedrock', model: 'm' }, 'AWS_ACCESS_KEY_ID is not set');

    expect(error).toMatchObject({ kind: 'unavailable', code: 'missing_credentials' });
    expect(error.message).toBe('target bedrock/m cannot sign its requests: AWS_ACCESS_KEY_ID is not set');
  });
});

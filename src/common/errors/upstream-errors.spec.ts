import { isResilienceError } from './resilience-error';
import { parseRetryAfter, upstreamNetworkError, upstreamStatusError } from './upstream-errors';

const NOW = Date.UTC(2026, 0, 1, 12, 0, 0);
const DAY_MS = 86_400_000;

describe('parseRetryAfter', () => {
  it.each([
    ['0', 0],
    ['7', 7000],
    ['120', 120_000],
    [' 7 ', 7000],
  ])('reads delay-seconds %j as %i ms', (value, expectedMs) => {
    expect(parseRetryAfter(value, NOW)).toBe(expectedMs);
  });

  it('reads an HTTP date in the future as the milliseconds from now', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:30 GMT', NOW)).toBe(30_000);
  });

  it('measures an HTTP date from the given now, not from the system clock', () => {
    const date = 'Thu, 01 Jan 2026 12:00:30 GMT';

    expect(parseRetryAfter(date, NOW - 60_000)).toBe(90_000);
    expect(parseRetryAfter(date, NOW + 10_000)).toBe(20_000);
  });

  it('reads an HTTP date in the past as 0', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 11:59:00 GMT', NOW)).toBe(0);
  });

  it('reads an HTTP date equal to now as 0', () => {
    expect(parseRetryAfter('Thu, 01 Jan 2026 12:00:00 GMT', NOW)).toBe(0);
  });

  it.each(['', 'soon', 'tomorrow', '1e3', '5.0', '0x10', 'Infinity', 'NaN', '120s'])(
    'answers undefined for the unreadable value %j',
    (value) => {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    },
  );

  it('answers undefined when the header is absent', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });

  it.each([[['7']], [['7', '9']], [[]]])('answers undefined for the repeated header %j', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('caps delay-seconds at one day', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(DAY_MS);
    expect(parseRetryAfter('86401', NOW)).toBe(DAY_MS);
    expect(parseRetryAfter('99999999999999999999999', NOW)).toBe(DAY_MS);
  });

  it('caps an HTTP date at one day from now', () => {
    expect(parseRetryAfter('Fri, 31 Dec 2099 23:59:59 GMT', NOW)).toBe(DAY_MS);
  });
});

describe('upstreamStatusError', () => {
  it.each([500, 501, 502, 503, 504, 599, 408, 429])('makes a %i transient', (status) => {
    const error = upstreamStatusError('render', status, undefined);

    expect(error).toMatchObject({ kind: 'transient', status: 502, jsonrpcCode: -32011 });
    expect(error.message).toBe(`upstream of tool 'render' answered HTTP ${status}`);
  });

  it.each([429, 503])('keeps the Retry-After of a %i', (status) => {
    expect(upstreamStatusError('render', status, 7000).retryAfterMs).toBe(7000);
  });

  it('makes a 404 not_found', () => {
    const error = upstreamStatusError('render', 404, 7000);

    expect(error).toMatchObject({ kind: 'not_found', status: 404, jsonrpcCode: -32601, retryAfterMs: undefined });
    expect(error.message).toBe("upstream of tool 'render' answered HTTP 404");
  });

  it.each([400, 401, 403, 409, 410, 413, 422, 499])(
    'makes a %i schema: the upstream refused the arguments',
    (status) => {
      const error = upstreamStatusError('render', status, 7000);

      expect(error).toMatchObject({ kind: 'schema', status: 400, jsonrpcCode: -32602, retryAfterMs: undefined });
      expect(error.message).toBe(`upstream of tool 'render' answered HTTP ${status}: it refused the arguments`);
    },
  );

  it.each([301, 302, 303, 307, 308, 304, 100])('makes a %i transient, as a redirect that is not followed', (status) => {
    const error = upstreamStatusError('render', status, undefined);

    expect(error.kind).toBe('transient');
    expect(error.message).toBe(`upstream of tool 'render' answered HTTP ${status}, which is not followed`);
  });

  it('counts no attempts of its own: the pipeline adds them', () => {
    expect(upstreamStatusError('render', 500, undefined).attempts).toBe(0);
  });
});

describe('upstreamNetworkError', () => {
  function networkError(code: unknown, message = 'connect ECONNREFUSED 10.1.2.3:8443 token=abc'): Error {
    return Object.assign(new Error(message), { code });
  }

  it.each(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'ENOTFOUND', 'ERR_TLS_CERT_ALTNAME_INVALID'])(
    'names the safe error code %s',
    (code) => {
      const error = upstreamNetworkError('render', networkError(code));

      expect(error).toMatchObject({ kind: 'transient', status: 502, jsonrpcCode: -32011 });
      expect(error.message).toBe(`upstream of tool 'render' could not be reached (${code})`);
    },
  );

  it('never copies the message of the network error', () => {
    const error = upstreamNetworkError('render', networkError('ECONNREFUSED'));

    expect(error.message).not.toContain('10.1.2.3');
    expect(error.message).not.toContain('token=abc');
  });

  it.each([
    ['lower case', 'econnrefused'],
    ['spaces', 'E CONN'],
    ['markup', '<b>ERR</b>'],
    ['41 characters', 'E'.repeat(41)],
    ['a number', 111],
    ['an object', { toString: () => 'ECONNREFUSED' }],
    ['nothing', undefined],
  ])('leaves out a code with %s', (_label, code) => {
    const error = upstreamNetworkError('render', networkError(code));

    expect(error.message).toBe("upstream of tool 'render' could not be reached");
  });

  it.each([
    ['null', null],
    ['a string', 'ECONNREFUSED'],
    ['a number', 7],
  ])('copes with %s thrown instead of an error', (_label, thrown) => {
    const error = upstreamNetworkError('render', thrown);

    expect(isResilienceError(error)).toBe(true);
    expect(error.message).toBe("upstream of tool 'render' could not be reached");
  });

  it('keeps the original error as its cause, for logs only', () => {
    const original = networkError('ECONNRESET');

    expect(upstreamNetworkError('render', original).cause).toBe(original);
  });
});

describe('parseRetryAfter regressions', () => {
  const now = Date.parse('Sun, 06 Nov 1994 08:49:00 GMT');

  it.each(['-1', '1.5', '+5', 'soon 2099', 'Tomorrow', '1994-11-06T08:49:37Z'])(
    'reads %p as unreadable rather than as a date',
    (value) => {
      expect(parseRetryAfter(value, now)).toBeUndefined();
    },
  );

  it.each(['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994'])(
    'reads the HTTP-date form %p',
    (value) => {
      expect(parseRetryAfter(value, now)).toBe(37_000);
    },
  );
});

import { createHash } from 'node:crypto';
import { isResilienceError, type ResilienceError } from '../common';
import { ApiKeyAuthenticator, type ApiKeySettings } from './api-key-authenticator';

const ACME_KEY = 'acme-live-key-7f3c9a1b2d';
const GLOBEX_KEY = 'globex.live/Key+42~';
const UNKNOWN_KEY = 'not-a-configured-key-0000';

const sha256 = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');

function authenticator(settings: Partial<ApiKeySettings> = {}): ApiKeyAuthenticator {
  return new ApiKeyAuthenticator({
    apiKeys: [
      { sha256: sha256(ACME_KEY), tenant: 'acme' },
      { sha256: sha256(GLOBEX_KEY).toUpperCase(), tenant: 'globex' },
    ],
    allowAnonymous: false,
    ...settings,
  });
}

/** The error `authenticate` throws; fails the test if it returns. */
function refusal(
  subject: ApiKeyAuthenticator,
  authorization: string | string[] | undefined,
  apiKey?: string | string[],
): ResilienceError {
  let caller: unknown;
  try {
    caller = subject.authenticate(authorization, apiKey);
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    return error;
  }
  throw new Error(`expected a refusal, got ${JSON.stringify(caller)}`);
}

describe('ApiKeyAuthenticator', () => {
  it('maps a configured key to its tenant as a known caller', () => {
    expect(authenticator().authenticate(`Bearer ${ACME_KEY}`)).toEqual({ tenant: 'acme', known: true });
  });

  it('accepts a key configured as an upper-case sha256 hex', () => {
    expect(authenticator().authenticate(`Bearer ${GLOBEX_KEY}`)).toEqual({ tenant: 'globex', known: true });
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the %s scheme', (scheme) => {
    expect(authenticator().authenticate(`${scheme} ${ACME_KEY}`)).toEqual({ tenant: 'acme', known: true });
  });

  it('tells tenants apart by their keys', () => {
    const subject = authenticator();

    expect(subject.authenticate(`Bearer ${ACME_KEY}`).tenant).toBe('acme');
    expect(subject.authenticate(`Bearer ${GLOBEX_KEY}`).tenant).toBe('globex');
  });

  it.each([true, false])('refuses an unknown key with 401 unauthorized when allowAnonymous is %p', (allowAnonymous) => {
    const error = refusal(authenticator({ allowAnonymous }), `Bearer ${UNKNOWN_KEY}`);

    expect(error.kind).toBe('unauthorized');
    expect(error.status).toBe(401);
  });

  it('refuses the sha256 of a key presented as the key itself', () => {
    expect(refusal(authenticator(), `Bearer ${sha256(ACME_KEY)}`).kind).toBe('unauthorized');
  });

  it('refuses a key that differs from a configured one only in case', () => {
    expect(refusal(authenticator(), `Bearer ${ACME_KEY.toUpperCase()}`).kind).toBe('unauthorized');
  });

  it.each<[string, string | string[]]>([
    ['the key without a scheme', ACME_KEY],
    ['the Basic scheme', `Basic ${Buffer.from(`acme:${ACME_KEY}`).toString('base64')}`],
    ['the Basic scheme with the key itself', `Basic ${ACME_KEY}`],
    ['an empty header', ''],
    ['a scheme without a key', 'Bearer'],
    ['a scheme and a space without a key', 'Bearer '],
    ['two spaces before the key', `Bearer  ${ACME_KEY}`],
    ['a trailing space', `Bearer ${ACME_KEY} `],
    ['a leading space', ` Bearer ${ACME_KEY}`],
    ['a key with a space inside', `Bearer ${ACME_KEY} extra`],
    ['a key with a control character', `Bearer ${ACME_KEY}\u0007`],
    ['a key with a non-ASCII character', `Bearer ${ACME_KEY}é`],
    ['several headers as an array', [`Bearer ${ACME_KEY}`, `Bearer ${ACME_KEY}`]],
    ['a one-element array', [`Bearer ${ACME_KEY}`]],
    ['an empty array', []],
  ])('refuses %s with 401 unauthorized, even with allowAnonymous', (_case, authorization) => {
    for (const allowAnonymous of [false, true]) {
      const error = refusal(authenticator({ allowAnonymous }), authorization);
      expect(error.kind).toBe('unauthorized');
      expect(error.status).toBe(401);
    }
  });

  it('refuses an over-long key even when its sha256 is configured', () => {
    const longKey = 'k'.repeat(513);
    const subject = new ApiKeyAuthenticator({
      apiKeys: [{ sha256: sha256(longKey), tenant: 'acme' }],
      allowAnonymous: true,
    });

    expect(refusal(subject, `Bearer ${longKey}`).kind).toBe('unauthorized');
  });

  it('accepts a configured key of 512 characters', () => {
    const key = 'k'.repeat(512);
    const subject = new ApiKeyAuthenticator({
      apiKeys: [{ sha256: sha256(key), tenant: 'acme' }],
      allowAnonymous: false,
    });

    expect(subject.authenticate(`Bearer ${key}`)).toEqual({ tenant: 'acme', known: true });
  });

  it('makes a caller without a header anonymous and unknown when allowAnonymous is true', () => {
    expect(authenticator({ allowAnonymous: true }).authenticate(undefined)).toEqual({
      tenant: 'anonymous',
      known: false,
    });
  });

  it('refuses a caller without a header with 401 unauthorized when allowAnonymous is false', () => {
    const error = refusal(authenticator({ allowAnonymous: false }), undefined);

    expect(error.kind).toBe('unauthorized');
    expect(error.status).toBe(401);
  });

  it('tells a caller with an unknown key where anonymous callers are let in that sending no key is a way in', () => {
    const error = refusal(authenticator({ allowAnonymous: true }), `Bearer ${UNKNOWN_KEY}`);

    expect(error.status).toBe(401);
    expect(error.message).toBe(
      "the API key is not valid: no key of auth.apiKeys matches it; callers that send no key are let in here, as tenant 'anonymous'",
    );
  });

  it('says where keys are configured, and nothing of anonymous callers, where they are not let in', () => {
    const error = refusal(authenticator({ allowAnonymous: false }), undefined, UNKNOWN_KEY);

    expect(error.message).toBe('the API key is not valid: no key of auth.apiKeys matches it');
  });

  it('tells a caller whose header holds no well-formed key how to send one', () => {
    const error = refusal(authenticator({ allowAnonymous: true }), 'Basic dXNlcjpwYXNz');

    expect(error.status).toBe(401);
    expect(error.message).toMatch(/^the API key is not valid: send Authorization: Bearer <key>, or x-api-key: <key>/);
  });

  it('throws a RangeError when anonymous is a configured tenant', () => {
    expect(
      () =>
        new ApiKeyAuthenticator({ apiKeys: [{ sha256: sha256(ACME_KEY), tenant: 'anonymous' }], allowAnonymous: true }),
    ).toThrow(RangeError);
  });

  it('never puts the presented key or its hash in an error', () => {
    const subject = authenticator({ allowAnonymous: false });
    const presented = [
      `Bearer ${UNKNOWN_KEY}`,
      `Basic ${UNKNOWN_KEY}`,
      UNKNOWN_KEY,
      [`Bearer ${UNKNOWN_KEY}`, `Bearer ${UNKNOWN_KEY}`],
      `Bearer ${UNKNOWN_KEY}${'x'.repeat(600)}`,
    ];

    for (const authorization of presented) {
      const error = refusal(subject, authorization);
      const shown = `${error.message} ${String(error)} ${JSON.stringify(error)} ${String(error.cause)}`;
      expect(shown).not.toContain(UNKNOWN_KEY);
      expect(shown).not.toContain(sha256(UNKNOWN_KEY));
    }
  });

  it('never puts a configured key or its hash in the error about an anonymous tenant', () => {
    let thrown: unknown;
    try {
      new ApiKeyAuthenticator({ apiKeys: [{ sha256: sha256(ACME_KEY), tenant: 'anonymous' }], allowAnonymous: true });
    } catch (error) {
      thrown = error;
    }

    expect(thrown).toBeInstanceOf(RangeError);
    expect((thrown as Error).message).not.toContain(sha256(ACME_KEY));
    expect((thrown as Error).message).not.toContain(ACME_KEY);
  });

  it('lists each configured tenant once', () => {
    const subject = new ApiKeyAuthenticator({
      apiKeys: [
        { sha256: sha256('acme-key-1'), tenant: 'acme' },
        { sha256: sha256('globex-key'), tenant: 'globex' },
        { sha256: sha256('acme-key-2'), tenant: 'acme' },
      ],
      allowAnonymous: true,
    });

    expect(subject.tenants().sort()).toEqual(['acme', 'globex']);
  });

  it('lists no tenants when no keys are configured', () => {
    expect(new ApiKeyAuthenticator({ apiKeys: [], allowAnonymous: true }).tenants()).toEqual([]);
  });

  it('keeps both keys of a tenant with two keys working', () => {
    const subject = new ApiKeyAuthenticator({
      apiKeys: [
        { sha256: sha256('acme-key-1'), tenant: 'acme' },
        { sha256: sha256('acme-key-2'), tenant: 'acme' },
      ],
      allowAnonymous: false,
    });

    expect(subject.authenticate('Bearer acme-key-1')).toEqual({ tenant: 'acme', known: true });
    expect(subject.authenticate('Bearer acme-key-2')).toEqual({ tenant: 'acme', known: true });
  });

  describe("x-api-key (what Anthropic's SDK sends)", () => {
    it('maps a configured key in x-api-key alone to its tenant', () => {
      expect(authenticator().authenticate(undefined, ACME_KEY)).toEqual({ tenant: 'acme', known: true });
      expect(authenticator().authenticate(undefined, GLOBEX_KEY)).toEqual({ tenant: 'globex', known: true });
    });

    it('accepts the same key in Authorization and x-api-key', () => {
      expect(authenticator().authenticate(`Bearer ${ACME_KEY}`, ACME_KEY)).toEqual({ tenant: 'acme', known: true });
    });

    it.each<[string, string, string]>([
      ['two configured keys of different tenants', `Bearer ${ACME_KEY}`, GLOBEX_KEY],
      ['a configured key and an unknown one', `Bearer ${ACME_KEY}`, UNKNOWN_KEY],
      ['an unknown key and a configured one', `Bearer ${UNKNOWN_KEY}`, ACME_KEY],
      ['keys that differ only in case', `Bearer ${ACME_KEY}`, ACME_KEY.toUpperCase()],
    ])('refuses %s in the two headers with 401 unauthorized, even with allowAnonymous', (_case, bearer, apiKey) => {
      for (const allowAnonymous of [false, true]) {
        const error = refusal(authenticator({ allowAnonymous }), bearer, apiKey);
        expect(error.kind).toBe('unauthorized');
        expect(error.message).toBe('Authorization and x-api-key carry different API keys: send one');
      }
    });

    it.each([true, false])('refuses an unknown key in x-api-key when allowAnonymous is %p', (allowAnonymous) => {
      expect(refusal(authenticator({ allowAnonymous }), undefined, UNKNOWN_KEY).kind).toBe('unauthorized');
    });

    it.each<[string, string | string[]]>([
      ['an empty value', ''],
      ['the Bearer scheme in it', `Bearer ${ACME_KEY}`],
      ['a leading space', ` ${ACME_KEY}`],
      ['a key with a space inside', `${ACME_KEY} extra`],
      ['a key with a control character', `${ACME_KEY}\u0007`],
      ['a key with a non-ASCII character', `${ACME_KEY}é`],
      ['a key of 513 characters', 'k'.repeat(513)],
      ['two headers as an array', [ACME_KEY, ACME_KEY]],
      ['a one-element array', [ACME_KEY]],
    ])('refuses x-api-key with %s with 401 unauthorized, even with allowAnonymous', (_case, apiKey) => {
      for (const allowAnonymous of [false, true]) {
        expect(refusal(authenticator({ allowAnonymous }), undefined, apiKey).kind).toBe('unauthorized');
      }
    });

    it('refuses a configured key in x-api-key beside a malformed Authorization', () => {
      expect(refusal(authenticator(), `Basic ${ACME_KEY}`, ACME_KEY).kind).toBe('unauthorized');
      expect(refusal(authenticator(), 'Bearer', ACME_KEY).kind).toBe('unauthorized');
    });

    it('refuses a configured Bearer key beside a malformed x-api-key', () => {
      expect(refusal(authenticator(), `Bearer ${ACME_KEY}`, '').kind).toBe('unauthorized');
    });

    it('names both headers when no key is sent and one is required', () => {
      expect(refusal(authenticator({ allowAnonymous: false }), undefined, undefined).message).toBe(
        'an API key is required: Authorization: Bearer <key>, or x-api-key: <key>',
      );
    });

    it('never puts a presented key or its hash in an error', () => {
      const subject = authenticator({ allowAnonymous: false });
      const presented: Array<[string | undefined, string | string[]]> = [
        [undefined, UNKNOWN_KEY],
        [`Bearer ${ACME_KEY}`, UNKNOWN_KEY],
        [`Bearer ${UNKNOWN_KEY}`, ACME_KEY],
        [undefined, [UNKNOWN_KEY, ACME_KEY]],
        [undefined, `${UNKNOWN_KEY} ${ACME_KEY}`],
      ];

      for (const [authorization, apiKey] of presented) {
        const error = refusal(subject, authorization, apiKey);
        const shown = `${error.message} ${String(error)} ${JSON.stringify(error)} ${String(error.cause)}`;
        for (const key of [UNKNOWN_KEY, ACME_KEY]) {
          expect(shown).not.toContain(key);
          expect(shown).not.toContain(sha256(key));
        }
      }
    });
  });
});

import { hash } from 'node:crypto';
import { ANONYMOUS_TENANT, ResilienceError } from '../common';

/** Who is calling, from the API key alone. */
export interface Caller {
  tenant: string;
  /** A tenant of the config's `apiKeys`; false for `anonymous`. */
  known: boolean;
}

export interface ApiKeySettings {
  /** SHA-256 (hex) of each key, and its tenant. */
  apiKeys: ReadonlyArray<{ sha256: string; tenant: string }>;
  /** Callers without a key are tenant `anonymous`. */
  allowAnonymous: boolean;
}

const ANONYMOUS: Caller = Object.freeze({ tenant: ANONYMOUS_TENANT, known: false });
const BEARER = /^Bearer [\x21-\x7e]{1,512}$/i;
const BEARER_PREFIX_LENGTH = 'Bearer '.length;
/** `x-api-key: <key>`: the key alone, with the same characters and length as a bearer key. */
const BARE_KEY = /^[\x21-\x7e]{1,512}$/;
const MALFORMED_KEY =
  'the API key is not valid: send Authorization: Bearer <key>, or x-api-key: <key> (1-512 visible ASCII characters)';
// Says where keys are configured (what an operator fixes), never which keys are.
const UNKNOWN_KEY = 'the API key is not valid: no key of auth.apiKeys matches it';

/**
 * Identity (docs/http-contract.md section 1): the API key, from `Authorization: Bearer <key>` or
 * `x-api-key: <key>` (what Anthropic's SDK sends), its SHA-256 looked up in the config. A
 * presented key that is unknown or malformed is always 401, even where anonymous callers are
 * allowed: a typo must not quietly become `anonymous`; so are two headers with different keys
 * (which one names the caller?). Nothing but the key can name a tenant.
 */
export class ApiKeyAuthenticator {
  private readonly callers = new Map<string, Caller>();
  /** What a refused key is told: where anonymous callers are let in, that sending no key is one way in. */
  private readonly unknownKey: string;

  constructor(private readonly settings: ApiKeySettings) {
    for (const { sha256, tenant } of settings.apiKeys) {
      if (tenant === ANONYMOUS_TENANT) throw new RangeError(`'${ANONYMOUS_TENANT}' cannot be a configured tenant`);
      this.callers.set(sha256.toLowerCase(), Object.freeze({ tenant, known: true }));
    }
    this.unknownKey = settings.allowAnonymous
      ? `${UNKNOWN_KEY}; callers that send no key are let in here, as tenant '${ANONYMOUS_TENANT}'`
      : UNKNOWN_KEY;
  }

  /**
   * The caller of a request with these header values: `Authorization` and `x-api-key`. Either
   * may carry the key, or both the same key.
   */
  authenticate(authorization: string | string[] | undefined, apiKey?: string | string[]): Caller {
    if (authorization === undefined && apiKey === undefined) {
      if (this.settings.allowAnonymous) return ANONYMOUS;
      throw new ResilienceError(
        'unauthorized',
        'an API key is required: Authorization: Bearer <key>, or x-api-key: <key>',
      );
    }
    const bearer = authorization === undefined ? null : bearerKey(authorization);
    const bare = apiKey === undefined ? null : bareKey(apiKey);
    if (bearer === undefined || bare === undefined) throw new ResilienceError('unauthorized', MALFORMED_KEY);
    if (bearer !== null && bare !== null && bearer !== bare) {
      throw new ResilienceError('unauthorized', 'Authorization and x-api-key carry different API keys: send one');
    }
    const key = bearer ?? bare;
    const caller = key === null ? undefined : this.callers.get(sha256Hex(key));
    if (!caller) throw new ResilienceError('unauthorized', this.unknownKey);
    return caller;
  }

  /** The configured tenants. */
  tenants(): string[] {
    return [...new Set([...this.callers.values()].map((caller) => caller.tenant))];
  }
}

/** The key of an `Authorization` value, or undefined when it is not `Bearer <key>`. */
function bearerKey(authorization: string | string[]): string | undefined {
  return typeof authorization === 'string' && BEARER.test(authorization)
    ? authorization.slice(BEARER_PREFIX_LENGTH)
    : undefined;
}

/** The key of an `x-api-key` value, or undefined when it is not one key (several headers are not). */
function bareKey(apiKey: string | string[]): string | undefined {
  return typeof apiKey === 'string' && BARE_KEY.test(apiKey) ? apiKey : undefined;
}

/** One-shot `crypto.hash`: a third of the cost of a Hash object for a key this short. */
function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

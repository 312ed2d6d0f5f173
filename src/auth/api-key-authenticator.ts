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

/**
 * Identity (docs/http-contract.md section 1): `Authorization: Bearer <key>`, the key's SHA-256 looked up in
 * the config. A presented key that is unknown is always 401, even where anonymous callers are
 * allowed: a typo must not quietly become `anonymous`. Nothing but the key can name a tenant.
 */
export class ApiKeyAuthenticator {
  private readonly callers = new Map<string, Caller>();

  constructor(private readonly settings: ApiKeySettings) {
    for (const { sha256, tenant } of settings.apiKeys) {
      if (tenant === ANONYMOUS_TENANT) throw new RangeError(`'${ANONYMOUS_TENANT}' cannot be a configured tenant`);
      this.callers.set(sha256.toLowerCase(), Object.freeze({ tenant, known: true }));
    }
  }

  /** The caller of a request with this `Authorization` header value. */
  authenticate(authorization: string | string[] | undefined): Caller {
    if (authorization === undefined) {
      if (this.settings.allowAnonymous) return ANONYMOUS;
      throw new ResilienceError('unauthorized', 'an API key is required: Authorization: Bearer <key>');
    }
    const key =
      typeof authorization === 'string' && BEARER.test(authorization)
        ? authorization.slice(BEARER_PREFIX_LENGTH)
        : undefined;
    const caller = key === undefined ? undefined : this.callers.get(sha256Hex(key));
    if (!caller) throw new ResilienceError('unauthorized', 'the API key is not valid');
    return caller;
  }

  /** The configured tenants. */
  tenants(): string[] {
    return [...new Set([...this.callers.values()].map((caller) => caller.tenant))];
  }
}

/** One-shot `crypto.hash`: a third of the cost of a Hash object for a key this short. */
function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

import { createHash } from 'node:crypto';
// The file, not the module's index: the index brings the idempotency service and Nest with it.
import { canonicalJson } from '../../idempotency';
import type { LlmTargetConfig } from '../llm.options';
import type { ChatRequest, PassThroughRequest } from '../chat.types';

/**
 * Bumped whenever what goes into a key changes, so that entries a previous version left in a
 * shared Redis are never read as answers to a key computed the new way.
 */
const KEY_VERSION = 1;

/**
 * Request fields that never change the answer, left out of the key so that they do not split
 * one answer into many entries. Everything else is in: a miss costs a provider call, a wrong
 * hit serves an answer to a question nobody asked.
 *
 * - `stream`: how the answer travels, not what it is; a hit is replayed as a stream when asked.
 * - `stream_options`: only whether a stream ends with a usage chunk (the entry keeps usage).
 * - `user`, `safety_identifier`: the end user's id, for the provider's abuse monitoring;
 *   keyed on, every end user of a tenant would have entries of their own.
 * - `prompt_cache_key`: a routing hint for the provider's own prompt cache; it changes the
 *   price of the input, not the output.
 */
export const FIELDS_NOT_KEYED: readonly string[] = Object.freeze([
  'stream',
  'stream_options',
  'user',
  'safety_identifier',
  'prompt_cache_key',
]);

/**
 * The exact-cache key of a request: SHA-256 hex of the canonical JSON (keys sorted at every
 * depth) of the tenant, the route and every request field that can change the answer, so the
 * same request in another key order has the same key, and two tenants never share one.
 *
 * The request sits under a field of its own: a client field named `tenant` or `route` cannot
 * pass for the scope. Values are not normalised beyond JSON (`temperature: 1` and no
 * temperature are two keys), since a normalisation that is wrong for one provider is a wrong hit.
 *
 * A request that came in another wire format is keyed on that request too (`passThrough`): a
 * target that speaks the format is sent it whole, so a field the translation drops can change the
 * answer, and its answer (thinking included) is not the one a Chat Completions client would get.
 *
 * @param tenant The caller's tenant (never empty: a key without one would be shared).
 * @param route What names the route's answers: {@link routeCacheScope} of the route, so that
 *   a change of its targets or output cap starts fresh entries.
 */
export function exactCacheKey(
  tenant: string,
  route: string,
  request: ChatRequest,
  passThrough?: PassThroughRequest,
): string {
  if (typeof tenant !== 'string' || tenant === '') throw new RangeError('the cache key needs a tenant');
  if (typeof route !== 'string' || route === '') throw new RangeError('the cache key needs a route');
  const keyed: Record<string, unknown> = { ...request };
  for (const field of FIELDS_NOT_KEYED) delete keyed[field];
  const scope = { v: KEY_VERSION, tenant, route, request: keyed };
  // Labelled `native`, as before the pass-through had its name: the keys of cached answers stay the same.
  const scoped = canonicalJson(passThrough ? { ...scope, native: passThroughKeyed(passThrough) } : scope);
  return createHash('sha256').update(scoped).digest('hex');
}

/**
 * A request as it came, as far as it can change an answer: its body (thinking and all) and its
 * betas, not `metadata` (the end user's id, as `user` above) nor, as in the request, the fields
 * that never change an answer (a Responses body has `user`, `safety_identifier`, `prompt_cache_key`).
 */
function passThroughKeyed({ body, betas }: PassThroughRequest): object {
  const { metadata: _metadata, ...keyed }: Record<string, unknown> = body;
  for (const field of FIELDS_NOT_KEYED) delete keyed[field];
  return { body: keyed, betas: [...betas].sort() };
}

/** What of a route's config shapes its answers: its targets (in order) and its output cap. */
export interface RouteAnswerConfig {
  readonly targets: readonly LlmTargetConfig[];
  readonly maxOutputTokens: number;
}

/**
 * The `route` argument of {@link exactCacheKey}: the route's name and a digest of what of its
 * config can change an answer. The targets (provider, model, base URL, a fake's script, their
 * order: the first that answers serves) and `maxOutputTokens` (sent as the output cap when the
 * client sets none, so it decides where an answer is cut). Left out: each target's `apiKey`
 * (rotating a credential changes no answer, and a secret feeds nothing else) and what only
 * decides whether an answer arrives (each target's `timeoutMs`, and the route's timeouts,
 * retries, breaker, lane and hedging).
 */
export function routeCacheScope(name: string, route: RouteAnswerConfig): string {
  const targets = route.targets.map((target) => ({ ...target, apiKey: undefined, timeoutMs: undefined }));
  const digest = createHash('sha256')
    .update(canonicalJson({ targets, maxOutputTokens: route.maxOutputTokens }))
    .digest('hex');
  return `${name}#${digest}`;
}

/** What one request's `Cache-Control` lets the route do with the exact cache. */
export interface CacheDirectives {
  /** Serve a stored answer if there is one. */
  lookup: boolean;
  /** Store the answer this request gets. */
  store: boolean;
}

/**
 * Reads a request's `Cache-Control` header (a string, the values of repeated headers, or none):
 * `no-cache` skips the lookup but stores the fresh answer; `no-store` does neither. Directive
 * names are case-insensitive, a list is comma-separated (commas inside a quoted value do not
 * split it), a directive with an argument counts as itself, and every other directive is
 * ignored.
 */
export function cacheDirectives(cacheControlHeader: string | readonly string[] | undefined): CacheDirectives {
  let noCache = false;
  let noStore = false;
  const values = typeof cacheControlHeader === 'string' ? [cacheControlHeader] : (cacheControlHeader ?? []);
  for (const value of values) {
    for (const directive of splitDirectives(value)) {
      const name = directive.split('=', 1)[0].trim().toLowerCase();
      if (name === 'no-cache') noCache = true;
      else if (name === 'no-store') noStore = true;
    }
  }
  return { lookup: !noCache && !noStore, store: !noStore };
}

/** The comma-separated members of a header value, commas inside double quotes kept. */
function splitDirectives(value: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let index = 0; index < value.length; index++) {
    const char = value[index];
    if (quoted && char === '\\') index++;
    else if (char === '"') quoted = !quoted;
    else if (char === ',' && !quoted) {
      parts.push(value.slice(start, index));
      start = index + 1;
    }
  }
  parts.push(value.slice(start));
  return parts;
}

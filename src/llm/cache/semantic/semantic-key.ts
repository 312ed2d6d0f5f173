import { createHash } from 'node:crypto';
// The file, not the module's index: the index brings the idempotency service and Nest with it.
import { canonicalJson } from '../../../idempotency';
import type { ChatRequest } from '../../chat.types';
import { FIELDS_NOT_KEYED } from '../cache-key';
import { isSemanticCacheable, questionText } from './semantic-cacheable';

/** Bumped whenever what goes into a partition changes, so old entries are never compared to new. */
const KEY_VERSION = 1;

/** Where a request's answer is looked for and stored in the semantic cache, and what is compared. */
export interface SemanticLookupKey {
  /**
   * SHA-256 hex of what must match exactly: the tenant, the route's cache scope, the embedder,
   * and the whole request but the last message's content and the fields that never change an
   * answer (those the exact cache leaves out too). Similarity is only ever computed inside one.
   */
  readonly partition: string;
  /** The last message's text: the only part compared by similarity. */
  readonly question: string;
  /** SHA-256 hex of `question`: the same question asked again replaces its entry. */
  readonly questionId: string;
}

/**
 * The semantic cache's key of a request that {@link isSemanticCacheable} admits.
 *
 * Why only the last message is embedded, and the rest matched exactly: a similarity over the
 * whole conversation is dominated by what is long and shared (a system prompt, earlier turns),
 * so with a 300-word system prompt "capital of France?" and "capital of Peru?" would be nearly
 * the same vector. Parameters (temperature, top_p, max tokens, stop, seed, the model, …) change
 * the answer, so they must be equal too, never merely close.
 *
 * @param tenant The caller's tenant (never empty: a partition without one would be shared).
 * @param scope The route's `routeCacheScope`: a change of its targets or output cap starts afresh.
 * @param embedderId The embedder's `id`: vectors of two embedders are never compared.
 */
export function semanticLookupKey(
  tenant: string,
  scope: string,
  request: ChatRequest,
  embedderId: string,
): SemanticLookupKey {
  if (typeof tenant !== 'string' || tenant === '') throw new RangeError('the semantic cache needs a tenant');
  if (typeof scope !== 'string' || scope === '') throw new RangeError('the semantic cache needs a route scope');
  if (!isSemanticCacheable(request)) throw new RangeError('the request is not one the semantic cache takes');
  const last = request.messages.at(-1)!;
  const question = questionText(last)!;
  const keyed: Record<string, unknown> = {
    ...request,
    messages: [...request.messages.slice(0, -1), { ...last, content: undefined }],
  };
  for (const field of FIELDS_NOT_KEYED) delete keyed[field];
  // The request under a field of its own: a client field named `tenant` cannot pass for the scope.
  const exact = canonicalJson({ v: KEY_VERSION, tenant, scope, embedder: embedderId, request: keyed });
  return {
    partition: sha256(exact),
    question,
    questionId: sha256(question),
  };
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

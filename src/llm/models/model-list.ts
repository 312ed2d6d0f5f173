import { ResilienceError } from '../../common';

/** One model of OpenAI's `GET /v1/models`. */
export interface OpenAiModel {
  id: string;
  object: 'model';
  /** Unix seconds. */
  created: number;
  owned_by: string;
}

/** One model of Anthropic's `GET /v1/models`. */
export interface AnthropicModel {
  type: 'model';
  id: string;
  display_name: string;
  /** RFC 3339. */
  created_at: string;
}

/** Anthropic's page of models: `limit` of them after `after_id`, or before `before_id`. */
export interface AnthropicModelPage {
  data: AnthropicModel[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

/** Who OpenAI's list says owns a route: the service that serves it. */
const OWNER = 'bulkhead';
const DEFAULT_PAGE = 20;
const LARGEST_PAGE = 1000;

export function openAiModel(id: string, createdMs: number): OpenAiModel {
  return { id, object: 'model', created: Math.floor(createdMs / 1000), owned_by: OWNER };
}

export function anthropicModel(id: string, createdMs: number): AnthropicModel {
  return { type: 'model', id, display_name: id, created_at: new Date(createdMs).toISOString() };
}

/**
 * Anthropic's paging over `ids` (in their order): `limit` (1–1000, default 20) after `after_id`
 * or before `before_id`. An id that is not in the list pages from the start, or to the end.
 */
export function anthropicModelPage(ids: readonly string[], createdMs: number, query: unknown): AnthropicModelPage {
  const { limit, afterId, beforeId } = pageQuery(query);
  let from = 0;
  let to = ids.length;
  if (afterId !== undefined) from = ids.indexOf(afterId) + 1;
  if (beforeId !== undefined) {
    const before = ids.indexOf(beforeId);
    to = before === -1 ? ids.length : before;
    from = Math.max(from, to - limit);
  }
  const page = ids.slice(from, Math.min(to, from + limit));
  return {
    data: page.map((id) => anthropicModel(id, createdMs)),
    has_more: beforeId !== undefined ? from > 0 : from + page.length < to,
    first_id: page[0] ?? null,
    last_id: page.at(-1) ?? null,
  };
}

function pageQuery(query: unknown): { limit: number; afterId?: string; beforeId?: string } {
  const { limit, after_id: afterId, before_id: beforeId } = (query ?? {}) as Record<string, unknown>;
  let size = DEFAULT_PAGE;
  if (limit !== undefined) {
    size = typeof limit === 'string' && /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(size >= 1 && size <= LARGEST_PAGE)) {
      throw new ResilienceError('invalid_request', `limit: must be an integer from 1 to ${LARGEST_PAGE}`);
    }
  }
  if (afterId !== undefined && typeof afterId !== 'string') {
    throw new ResilienceError('invalid_request', 'after_id: must be given once');
  }
  if (beforeId !== undefined && typeof beforeId !== 'string') {
    throw new ResilienceError('invalid_request', 'before_id: must be given once');
  }
  if (afterId !== undefined && beforeId !== undefined) {
    throw new ResilienceError('invalid_request', 'after_id and before_id: send one of them');
  }
  return { limit: size, afterId, beforeId };
}

import { z } from 'zod';
import { CALL_ID_PATTERN, NAME_PATTERN } from '../common';
import { PRIORITY_CLASSES } from '../bulkhead';
import { durationHeaderSchema } from '../dispatch';
import { idempotencyKeySchema } from '../idempotency';

/** A request header, a path or query parameter, or a response header, as a route declares it. */
export interface ParameterDoc {
  name: string;
  in: 'path' | 'query' | 'header';
  description: string;
  schema: z.ZodType;
  required?: boolean;
}

export interface HeaderDoc {
  description: string;
  schema: z.ZodType;
}

/** Names of tenants, tools, lanes and breakers, as the config has them. */
const name = z.string().regex(NAME_PATTERN);

export function pathName(parameter: string, description: string): ParameterDoc {
  return { name: parameter, in: 'path', required: true, description, schema: name };
}

export const CALL_ID_PARAMETER: ParameterDoc = {
  name: 'X-Call-Id',
  in: 'header',
  description: 'The call id; generated when absent, returned in `x-call-id`. An invalid one is refused, never echoed.',
  schema: z.string().regex(CALL_ID_PATTERN),
};

export const IDEMPOTENCY_KEY_PARAMETER: ParameterDoc = {
  name: 'Idempotency-Key',
  in: 'header',
  description:
    'Joins the running call with the same key, or replays a finished one; the same key with other arguments ' +
    'is `idempotency_conflict`.',
  schema: idempotencyKeySchema,
};

export const INVOKE_PARAMETERS: ParameterDoc[] = [
  CALL_ID_PARAMETER,
  IDEMPOTENCY_KEY_PARAMETER,
  {
    name: 'X-Timeout-Ms',
    in: 'header',
    description: "This call's attempt timeout: positive, up to 3 decimals, at most the tool's `timeoutMs`.",
    schema: durationHeaderSchema,
  },
  {
    name: 'X-Queue-Ttl-Ms',
    in: 'header',
    description: "The longest this call may wait in its lane's queue: positive, at most the lane's `queueTtlMs`.",
    schema: durationHeaderSchema,
  },
  {
    name: 'X-Bulkhead-Priority',
    in: 'header',
    description:
      "The call's class in its lane (a higher one starts first and displaces a lower one from a full queue); " +
      "held to the tenant's ceiling. Absent: the tool's.",
    schema: z.enum(PRIORITY_CLASSES),
  },
];

export const CALL_ID_HEADER: HeaderDoc = { description: "The call's id.", schema: z.string() };

export const RATE_LIMIT_HEADERS: Record<string, HeaderDoc> = {
  'RateLimit-Policy': {
    description: 'The tenant\'s limits (IETF draft), e.g. `"rpm";q=600;w=60`; only for a tenant with rate limits.',
    schema: z.string(),
  },
  RateLimit: {
    description: 'What is left (IETF draft), e.g. `"rpm";r=599;t=1`; only for a tenant with rate limits.',
    schema: z.string(),
  },
};

export const RETRY_AFTER_HEADER: HeaderDoc = {
  description: 'Whole seconds, rounded up; present where waiting helps (`retryAfterMs` in the body).',
  schema: z.string().regex(/^\d+$/),
};

export const RETRY_AFTER_MS_HEADER: HeaderDoc = {
  description:
    "The same wait in whole milliseconds, rounded up; beside every `Retry-After`. OpenAI's and Vercel's SDKs " +
    'read it first (they ignore a `Retry-After` of 60 s or more).',
  schema: z.string().regex(/^\d+$/),
};

/** The headers of the LLM route's answers. */
export const LLM_ANSWER_HEADERS: Record<string, HeaderDoc> = {
  'x-call-id': CALL_ID_HEADER,
  'x-bulkhead-served-by': { description: 'The target that answered, `provider/model`.', schema: z.string() },
  'x-bulkhead-attempts': { description: 'Attempts made.', schema: z.string().regex(/^\d+$/) },
  'x-bulkhead-cache': { description: 'The cache outcome.', schema: z.enum(['hit', 'semantic', 'miss', 'bypass']) },
  'x-bulkhead-cost-usd': {
    description: 'USD, 6 decimals; not sent on a stream (the cost is known only at its end).',
    schema: z.string(),
  },
  'x-bulkhead-hedged': { description: 'Whether a hedge was sent.', schema: z.enum(['true', 'false']) },
};

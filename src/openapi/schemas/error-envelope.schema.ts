import { z } from 'zod';
import { ERROR_KINDS, type ErrorKind } from '../../common';

/** Every error kind of the contract, in the order of `ERROR_KINDS` (docs/http-contract.md section 6). */
export const ALL_ERROR_KINDS = Object.keys(ERROR_KINDS) as ErrorKind[];

/** OpenAI's error fields, so that its SDKs read the error as their own. */
const OPENAI_FIELD = "OpenAI's, on every path under `/v1/` (and a chat stream's error event); absent elsewhere.";

/**
 * The `error` object of one kind: its JSON-RPC code is fixed, and every path under `/v1/` adds
 * OpenAI's `type`, `code` (both the kind) and `param` (null); a failure OpenAI's API names itself
 * (a kept response not found) has OpenAI's own `code` and `param`.
 */
function errorDetail(kind: ErrorKind) {
  const spec = ERROR_KINDS[kind];
  return z
    .strictObject({
      kind: z.literal(kind),
      message: z
        .string()
        .meta({ description: 'For people; never upstream bodies, stack traces, arguments or secrets.' }),
      attempts: z.int().min(0).meta({ description: 'Attempts that ran, retries included.' }),
      jsonrpcCode: z.literal(spec.jsonrpcCode),
      retryAfterMs: z.number().min(0).optional().meta({
        description:
          'Only where waiting helps; the response then has `Retry-After` (whole seconds) and `retry-after-ms`.',
      }),
      type: z.literal(kind).optional().meta({ description: OPENAI_FIELD }),
      code: z
        .string()
        .optional()
        .meta({ description: `${OPENAI_FIELD} The kind, or OpenAI's own code where OpenAI names the failure.` }),
      param: z
        .string()
        .nullable()
        .optional()
        .meta({ description: `${OPENAI_FIELD} Null, or the field OpenAI names for the failure.` }),
    })
    .meta({
      description: `\`${kind}\`: HTTP ${spec.status}, JSON-RPC ${spec.jsonrpcCode}; retried by the dispatcher: ${spec.retry}.`,
    });
}

/** The `error` object of each kind, by kind; each is a component of the document. */
export const ERROR_DETAILS = Object.fromEntries(ALL_ERROR_KINDS.map((kind) => [kind, errorDetail(kind)])) as Record<
  ErrorKind,
  ReturnType<typeof errorDetail>
>;

/** The error envelope with one of `kinds` (at least one): the body of every failure. */
export function errorEnvelopeSchema(kinds: readonly ErrorKind[]) {
  const [first, ...rest] = kinds.map((kind) => ERROR_DETAILS[kind]);
  return z.strictObject({
    error: rest.length === 0 ? first : z.discriminatedUnion('kind', [first, ...rest]),
    callId: z.string().optional().meta({ description: 'Present once known and valid.' }),
    toolId: z.string().optional().meta({ description: 'Present once known and valid.' }),
  });
}

/**
 * The kinds each HTTP status answers with, from `ERROR_KINDS`; and 413, `invalid_request` for a
 * body over `server.bodyLimitBytes`. (Node's protocol-level refusals, 408, 417 and 431, are
 * `invalid_request` too; the document's `default` answer covers them.)
 */
export const KINDS_BY_STATUS: ReadonlyMap<number, readonly ErrorKind[]> = (() => {
  const byStatus = new Map<number, ErrorKind[]>([[413, ['invalid_request']]]);
  for (const kind of ALL_ERROR_KINDS) {
    const { status } = ERROR_KINDS[kind];
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
})();

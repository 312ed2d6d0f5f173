/** Whether the dispatcher may retry an attempt that failed with this kind. */
export type RetryRule = 'never' | 'always' | 'idempotent_only';

interface ErrorKindSpec {
  readonly status: number;
  readonly jsonrpcCode: number;
  readonly retry: RetryRule;
}

/**
 * The error kinds of the API contract (docs/http-contract.md section 6): the HTTP status, the JSON-RPC code
 * and the retry rule of each live here and nowhere else.
 */
export const ERROR_KINDS = {
  invalid_request: { status: 400, jsonrpcCode: -32600, retry: 'never' },
  schema: { status: 400, jsonrpcCode: -32602, retry: 'never' },
  unauthorized: { status: 401, jsonrpcCode: -32001, retry: 'never' },
  budget_exceeded: { status: 402, jsonrpcCode: -32003, retry: 'never' },
  contained: { status: 403, jsonrpcCode: -32002, retry: 'never' },
  egress_denied: { status: 403, jsonrpcCode: -32013, retry: 'never' },
  not_found: { status: 404, jsonrpcCode: -32601, retry: 'never' },
  tool_changed: { status: 409, jsonrpcCode: -32014, retry: 'never' },
  idempotency_conflict: { status: 422, jsonrpcCode: -32004, retry: 'never' },
  rate_limited: { status: 429, jsonrpcCode: -32005, retry: 'never' },
  queue_full: { status: 503, jsonrpcCode: -32006, retry: 'never' },
  queue_expired: { status: 503, jsonrpcCode: -32007, retry: 'never' },
  circuit_open: { status: 503, jsonrpcCode: -32008, retry: 'never' },
  stopped: { status: 503, jsonrpcCode: -32009, retry: 'never' },
  unavailable: { status: 503, jsonrpcCode: -32012, retry: 'never' },
  overloaded: { status: 503, jsonrpcCode: -32015, retry: 'never' },
  timeout: { status: 504, jsonrpcCode: -32010, retry: 'idempotent_only' },
  transient: { status: 502, jsonrpcCode: -32011, retry: 'always' },
  internal: { status: 500, jsonrpcCode: -32603, retry: 'never' },
} as const satisfies Record<string, ErrorKindSpec>;

/** One of the snake_case error kinds clients see. */
export type ErrorKind = keyof typeof ERROR_KINDS;

export function isErrorKind(value: unknown): value is ErrorKind {
  return typeof value === 'string' && Object.hasOwn(ERROR_KINDS, value);
}

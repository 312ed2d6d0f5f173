import type { Response } from './http-client';

/** The JSON-RPC code of each error kind, copied from docs/http-contract.md section 6 (not from the code under test). */
export const JSONRPC_CODE = {
  invalid_request: -32600,
  schema: -32602,
  unauthorized: -32001,
  budget_exceeded: -32003,
  contained: -32002,
  egress_denied: -32013,
  not_found: -32601,
  tool_changed: -32014,
  idempotency_conflict: -32004,
  rate_limited: -32005,
  queue_full: -32006,
  queue_expired: -32007,
  circuit_open: -32008,
  stopped: -32009,
  unavailable: -32012,
  overloaded: -32015,
  timeout: -32010,
  transient: -32011,
  internal: -32603,
} as const;

export type ContractKind = keyof typeof JSONRPC_CODE;

const ENVELOPE_KEYS = ['callId', 'error', 'toolId'];
const ERROR_KEYS = ['attempts', 'jsonrpcCode', 'kind', 'message', 'retryAfterMs'];

/**
 * Asserts that a response is the error envelope of docs/http-contract.md section 6 with this status and kind,
 * and nothing else: no extra fields beside `error`, `callId` and `toolId`, and OpenAI's `type`, `code`
 * and `param` either all as the contract gives them or none. Returns `body.error` without those three.
 */
export function expectEnvelope(response: Response, status: number, kind: ContractKind) {
  expect({ status: response.status, kind: response.body?.error?.kind }).toEqual({ status, kind });
  expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
  const { body } = response;
  expect(ENVELOPE_KEYS).toEqual(expect.arrayContaining(Object.keys(body)));
  // OpenAI's fields (every path under /v1/): all three as the contract gives them, or none.
  const { type, code, param, ...own } = body.error;
  if (type !== undefined || code !== undefined || param !== undefined) {
    expect({ type, code, param }).toEqual({ type: kind, code: kind, param: null });
  }
  expect(ERROR_KEYS).toEqual(expect.arrayContaining(Object.keys(own)));
  expect(own).toMatchObject({
    kind,
    message: expect.any(String),
    attempts: expect.any(Number),
    jsonrpcCode: JSONRPC_CODE[kind],
  });
  return own as { kind: string; message: string; attempts: number; jsonrpcCode: number; retryAfterMs?: number };
}

/** Everything a client can read from a response: status, headers and body, as one string. */
export function responseText(response: Response): string {
  return JSON.stringify({ status: response.status, headers: response.headers, body: response.body });
}

/**
 * Asserts that a response shows none of `needles`, no stack frame and no file path of the
 * service's own code.
 */
export function expectNothingLeaked(response: Response, ...needles: string[]): void {
  const text = responseText(response);
  for (const needle of needles) expect(text).not.toContain(needle);
  expect(text).not.toMatch(/\s{2,}at /);
  expect(text).not.toMatch(/\.(ts|js):\d+|node_modules|\/src\/|\/work\//);
}

/**
 * How the service's clients shape what they send: the header sets and body fields of the common
 * SDKs and of a bare `fetch`, in their own orders. V8 optimises a property read for the object
 * shapes (hidden classes) it has seen, and a parsed body or a request's headers take their shape
 * from the keys the client sent, in its order. A warm-up that sends one shape leaves code that
 * is thrown away ("wrong map") at the first real client's request; one that sends more shapes
 * than V8 tracks one by one (four) leaves reads that take any shape, so no client's first
 * requests undo the warm-up.
 */

/** Headers a client adds to the key's: each set another shape of the request's header object. */
const HEADER_SETS: ReadonlyArray<Record<string, string>> = [
  // undici's `fetch` as the OpenAI and Anthropic SDKs and the public gateway benchmark use it.
  {
    accept: '*/*',
    'accept-language': '*',
    'sec-fetch-mode': 'cors',
    'user-agent': 'node',
    'accept-encoding': 'gzip, deflate',
  },
  // The OpenAI SDK's own headers, on `fetch`.
  {
    accept: 'application/json',
    'user-agent': 'OpenAI/JS 5.0.0',
    'x-stainless-lang': 'js',
    'x-stainless-package-version': '5.0.0',
    'x-stainless-os': 'Linux',
    'x-stainless-arch': 'x64',
    'x-stainless-runtime': 'node',
    'x-stainless-runtime-version': 'v22.0.0',
    'x-stainless-retry-count': '0',
    'x-stainless-timeout': '600',
  },
  // Anthropic's SDK: its version header.
  { accept: 'application/json', 'anthropic-version': '2023-06-01', 'user-agent': 'Anthropic/JS 0.50.0' },
  // Python's httpx, and a client that names its own calls.
  { accept: '*/*', 'accept-encoding': 'gzip, deflate', connection: 'keep-alive', 'user-agent': 'python-httpx/0.28.1' },
  { 'x-call-id': 'warm-up', accept: 'application/json' },
  // curl, and a client that sends nothing more than it must.
  { 'user-agent': 'curl/8.5.0', accept: '*/*' },
  {},
];

/** The `n`th header set, the key's and the body's type put where clients put them. */
export function clientHeaders(n: number, authorization: string): Record<string, string> {
  const extra = { ...HEADER_SETS[n % HEADER_SETS.length] };
  // A call id names one call: each call its own.
  if ('x-call-id' in extra) extra['x-call-id'] = `warm-up-${n}`;
  return n % 2 === 0
    ? { authorization, 'content-type': 'application/json', ...extra }
    : { ...extra, 'content-type': 'application/json', authorization };
}

type Messages = ReadonlyArray<{ role: string; content: string }>;

/**
 * The `n`th chat request body for `model`: the fields SDKs and agent frameworks send beside the
 * messages, in their orders (the OpenAI SDK sends the caller's object as written).
 */
export function chatBody(n: number, model: string, messages: Messages, stream: boolean): Record<string, unknown> {
  const streamed = stream ? { stream: true } : {};
  switch (n % 6) {
    case 0:
      return { model, messages, ...streamed };
    case 1:
      return { messages, model, ...streamed };
    case 2:
      return { model, messages, user: `user-${n % 3}`, ...streamed };
    case 3:
      return { model, messages, temperature: 0.2, max_tokens: 256, ...streamed };
    case 4:
      return { messages, model, top_p: 1, n: 1, max_completion_tokens: 512, ...streamed };
    default:
      return { model, ...streamed, messages, presence_penalty: 0, frequency_penalty: 0, seed: n };
  }
}

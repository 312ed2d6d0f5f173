import { Agent, request } from 'undici';

export interface Response<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the answer is JSON, the text otherwise. */
  body: T;
}

export interface SendOptions {
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as it is, with the given content-type. */
  raw?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  dispatcher?: Agent;
}

/** One HTTP request to a test app or upstream, answered with status, headers and parsed body. */
export async function send(method: string, url: string, options: SendOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.raw;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  const response = await request(url, {
    method: method as 'GET',
    headers,
    body,
    signal: options.signal,
    dispatcher: options.dispatcher,
  });
  const text = await response.body.text();
  const type = String(response.headers['content-type'] ?? '');
  return {
    status: response.statusCode,
    headers: response.headers as Response['headers'],
    body: type.includes('json') && text ? JSON.parse(text) : text,
  };
}

/** Calls a tool: POST /v1/tools/{toolId}/invoke with `{ arguments }`. */
export function invoke(
  base: string,
  toolId: string,
  args: unknown = {},
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return send('POST', `${base}/v1/tools/${toolId}/invoke`, { json: { arguments: args }, headers, signal });
}

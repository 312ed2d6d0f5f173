import { errors as undiciErrors } from 'undici';
import { countsAgainstBreaker } from '../../../circuit-breaker/breaker';
import { isResilienceError, ResilienceError } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import { parseConfig } from '../../../config';
import type { HttpToolConfig } from './http.options';
import type { HttpResponse, ToolHttpOptions } from '../../../containment';
import { RetryPolicy } from '../../../retry/retry-policy';
import type { ToolArguments, ToolContext } from '../../tool';
import { httpTool } from './http.tool';

const UPSTREAM_URL = 'http://upstream.test/fetch';

function toolConfig(tool: Record<string, unknown> = {}): HttpToolConfig {
  const parsed = parseConfig(
    {
      lanes: { main: { concurrency: 1, queueCapacity: 0 } },
      tools: { fetch: { lane: 'main', kind: 'http', url: UPSTREAM_URL, ...tool } },
    },
    {},
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  return parsed.config.tools.fetch as HttpToolConfig;
}

type Send = (url: string, options: ToolHttpOptions) => Promise<HttpResponse>;

function context(send: Send): ToolContext {
  return {
    callId: 'call-1',
    toolId: 'fetch',
    tenant: 'acme',
    attempt: 1,
    idempotencyKey: undefined,
    signal: new AbortController().signal,
    http: { request: send, stream: () => Promise.reject(new Error('not streamed')) },
    pool: 'normal',
  };
}

const answered: Send = () =>
  Promise.resolve({
    statusCode: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"ok":true}'),
  });

/** What the pipeline does with a failure: retry it (an idempotent tool, the most lenient case)? count it? */
function handling(error: unknown) {
  const kind = isResilienceError(error) ? error.kind : 'internal';
  const retry = new RetryPolicy({ maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, deadlineMs: 1_000 });
  return { kind, retried: retry.retries(kind, true), countedByBreaker: countsAgainstBreaker(error) };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail');
}

function nestedObjects(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let level = 1; level < depth; level++) value = { a: value };
  return value;
}

function circular(): ToolArguments {
  const args: ToolArguments = { items: [] };
  (args.items as unknown[]).push(args);
  return args;
}

describe('httpTool', () => {
  it('sends the arguments as JSON to the configured URL and answers the parsed JSON', async () => {
    const send = jest.fn(answered);
    const handler = httpTool('fetch', toolConfig(), new FakeClock());

    await expect(handler({ q: 'x', n: [1, 2] }, context(send))).resolves.toEqual({ ok: true });

    expect(send).toHaveBeenCalledWith(
      UPSTREAM_URL,
      expect.objectContaining({ method: 'POST', body: '{"q":"x","n":[1,2]}' }),
    );
  });

  describe('a failure before the request leaves is the caller’s, not the upstream’s', () => {
    it.each<[string, () => ToolArguments]>([
      ['a BigInt', () => ({ amount: 10n })],
      ['a circular value', circular],
      ['arguments nested 10,000 levels deep', () => nestedObjects(10_000)],
      [
        'a toJSON that throws',
        () => ({
          toJSON() {
            throw new Error('no');
          },
        }),
      ],
    ])('answers arguments JSON cannot encode (%s) with schema, sending nothing', async (_label, args) => {
      const send = jest.fn(answered);
      const handler = httpTool('fetch', toolConfig(), new FakeClock());

      const error = await failureOf(Promise.resolve().then(() => handler(args(), context(send))));

      expect(error).toBeInstanceOf(ResilienceError);
      expect((error as ResilienceError).message).toBe("arguments of tool 'fetch' cannot be sent as JSON");
      expect(handling(error)).toEqual({ kind: 'schema', retried: false, countedByBreaker: false });
      expect(send).not.toHaveBeenCalled();
    });

    it('answers arguments that encode to nothing with schema, sending nothing', async () => {
      const send = jest.fn(answered);
      const handler = httpTool('fetch', toolConfig(), new FakeClock());
      const args = { toJSON: () => undefined } as unknown as ToolArguments;

      const error = await failureOf(Promise.resolve().then(() => handler(args, context(send))));

      expect(handling(error)).toEqual({ kind: 'schema', retried: false, countedByBreaker: false });
      expect(send).not.toHaveBeenCalled();
    });

    it('answers a request the HTTP client refuses to build (a header it cannot send) with invalid_request', async () => {
      const refused = new undiciErrors.InvalidArgumentError('invalid x-api-key header');
      const handler = httpTool('fetch', toolConfig(), new FakeClock());

      const error = await failureOf(
        handler(
          {},
          context(() => Promise.reject(refused)),
        ),
      );

      expect(handling(error)).toEqual({ kind: 'invalid_request', retried: false, countedByBreaker: false });
      expect((error as ResilienceError).message).toBe("the request of tool 'fetch' could not be built");
      expect((error as ResilienceError).message).not.toContain('x-api-key');
    });

    it('passes the pool’s own refusals on unchanged (an invalid URL, a denied destination)', async () => {
      const handler = httpTool('fetch', toolConfig(), new FakeClock());

      for (const refusal of [
        new ResilienceError('invalid_request', 'the outbound URL is not valid'),
        new ResilienceError('egress_denied', 'the destination is not allowed'),
      ]) {
        await expect(
          handler(
            {},
            context(() => Promise.reject(refusal)),
          ),
        ).rejects.toBe(refusal);
      }
    });

    it('refuses a URL that does not parse when the tool is built, not on every call', () => {
      const config = { ...toolConfig(), url: 'http://exa mple.test/' };

      expect(() => httpTool('fetch', config, new FakeClock())).toThrow(RangeError);
    });
  });

  it.each<[string, unknown]>([
    ['refused', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ['reset', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['closed by the other side', new undiciErrors.SocketError('other side closed')],
  ])(
    'still answers a request that failed on the way (%s) with transient, retried and counted',
    async (_label, cause) => {
      const handler = httpTool('fetch', toolConfig(), new FakeClock());

      const error = await failureOf(
        handler(
          {},
          context(() => Promise.reject(cause)),
        ),
      );

      expect(handling(error)).toEqual({ kind: 'transient', retried: true, countedByBreaker: true });
      expect((error as ResilienceError).message).toMatch(/^upstream of tool 'fetch' could not be reached/);
    },
  );
});

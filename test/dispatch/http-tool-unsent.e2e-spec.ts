import { LazyAbortController } from '../../src/common';
import { CallPipeline } from '../../src/dispatch/call-pipeline.service';
import { ToolRegistry } from '../../src/dispatch/tool-registry.service';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { invoke, send } from '../support/http-client';
import { getEvents } from '../support/service-reads';
import { Upstream } from '../support/upstream';

/**
 * An http tool's request that never left the process (it could not be built) is the caller's
 * error: not `transient`, not retried, not counted by the tool's breaker, and the upstream sees
 * nothing. Over HTTP where a body can cause it (a config header the client refuses), through
 * the pipeline itself where only code can (arguments JSON cannot encode).
 */
describe('an http tool request that could not be sent', () => {
  let upstream: Upstream;
  let service: TestApp;

  /** The tool may retry everything it is allowed to, and its breaker opens on the first failure. */
  async function start(tool: Record<string, unknown> = {}): Promise<TestApp> {
    service = await createTestApp({
      lanes: { main: { concurrency: 2, queueCapacity: 2 } },
      tools: {
        fetch: {
          lane: 'main',
          kind: 'http',
          url: upstream.url('/fetch'),
          idempotent: true,
          retry: { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0 },
          breaker: { volumeThreshold: 1, errorThresholdPercentage: 1 },
          ...tool,
        },
      },
    });
    return service;
  }

  async function circuit(): Promise<{ state: string; failures: number }> {
    return (await send('GET', `${service.url}/v1/circuits`)).body.circuits.fetch;
  }

  beforeEach(async () => {
    upstream = await Upstream.start();
  });

  afterEach(async () => {
    await service?.close();
    await upstream.close();
  });

  it('answers a config header the HTTP client cannot send with invalid_request, once, without a breaker failure', async () => {
    await start({ headers: { 'x-api-key': 'key-€-secret' } });

    const first = await invoke(service.url, 'fetch', { n: 1 }, { 'x-call-id': 'unsent-1' });
    const second = await invoke(service.url, 'fetch', { n: 2 });

    const error = expectEnvelope(first, 400, 'invalid_request');
    expect(error).toMatchObject({ message: "the request of tool 'fetch' could not be built", attempts: 1 });
    expectNothingLeaked(first, 'key-€-secret', 'x-api-key', 'UND_ERR');
    // Not `circuit_open`: the first failure did not count, so the second call ran too.
    expect(expectEnvelope(second, 400, 'invalid_request').attempts).toBe(1);
    expect(upstream.requests).toHaveLength(0);
    expect(await circuit()).toMatchObject({ state: 'closed', failures: 0 });
  });

  it('answers arguments JSON cannot encode with schema, once, without a breaker failure', async () => {
    await start();
    const tool = service.app.get(ToolRegistry).require('fetch');
    const call = (callId: string, args: Record<string, unknown>) =>
      service.app.get(CallPipeline).invoke({
        tool,
        arguments: args,
        callId,
        tenant: 'anonymous',
        pool: 'isolated',
        contained: true,
        abort: new LazyAbortController(),
        timeoutMs: tool.timeoutMs,
        queueTtlMs: undefined,
      });

    const failures = await Promise.allSettled([call('code-1', { amount: 10n }), call('code-2', { amount: 20n })]);

    for (const failure of failures) {
      expect(failure).toMatchObject({
        status: 'rejected',
        reason: { kind: 'schema', attempts: 1, message: "arguments of tool 'fetch' cannot be sent as JSON" },
      });
    }
    expect(upstream.requests).toHaveLength(0);
    expect(await circuit()).toMatchObject({ state: 'closed', failures: 0 });
    const events = await getEvents(service.url);
    expect(events.map((event) => [event.callId, event.status]).sort()).toEqual([
      ['code-1', 'schema'],
      ['code-2', 'schema'],
    ]);
  });
});

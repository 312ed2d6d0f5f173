import type { ServerResponse } from 'node:http';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { getLanes } from '../support/service-reads';
import { hang, json, Upstream, type UpstreamHandler } from '../support/upstream';

const SEED = 42;
const BASE_DELAY_MS = 1000;
const MAX_DELAY_MS = 4000;
const TOOL = 'flaky';

function status(code: number, headers: Record<string, string> = {}): UpstreamHandler {
  return (_request, response: ServerResponse) => {
    response.writeHead(code, headers).end();
  };
}

/**
 * The waits the service draws before its retries, by the contract (full jitter): uniform in
 * [0, min(maxDelayMs, baseDelayMs × 2^(retry − 1))), from a source seeded like the service's.
 * Ask for each retry in the order the service makes them.
 */
function backoffPlan(): (retry: number) => number {
  const random = seededRandom(SEED);
  return (retry) => Math.floor(random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (retry - 1)));
}

describe('retries of an http tool against a real upstream', () => {
  let clock: FakeClock;
  let upstreams: Upstream[] = [];
  let current: TestApp | undefined;
  /** The virtual time at which each upstream request arrived. */
  let arrivals: number[] = [];

  beforeEach(() => {
    clock = new FakeClock();
    arrivals = [];
  });

  afterEach(async () => {
    // Upstreams first: closing one ends any request a failed test left hanging on it.
    for (const started of upstreams) await started.close();
    upstreams = [];
    await closeOnFakeClock(current, clock);
    current = undefined;
  });

  /** An upstream answering its requests with `script` in turn, the last handler for ever after. */
  async function upstream(...script: UpstreamHandler[]): Promise<Upstream> {
    let next = 0;
    const started = await Upstream.start((request, response) => {
      arrivals.push(clock.now());
      return script[Math.min(next++, script.length - 1)](request, response);
    });
    upstreams.push(started);
    return started;
  }

  /**
   * The app with one http tool `flaky` on `url`: 4 attempts, backoff from 1 s up to 4 s, and
   * a retry budget and breaker that stay out of the way (they have their own tests).
   */
  async function service(
    url: string,
    tool: Record<string, unknown> = {},
    retry: Record<string, unknown> = {},
  ): Promise<TestApp> {
    current = await createTestApp(
      {
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          [TOOL]: {
            lane: 'main',
            kind: 'http',
            url,
            timeoutMs: 5000,
            retry: {
              maxAttempts: 4,
              baseDelayMs: BASE_DELAY_MS,
              maxDelayMs: MAX_DELAY_MS,
              budget: { minRetries: 1000 },
              ...retry,
            },
            breaker: { volumeThreshold: 100_000, rollingCountTimeoutMs: 3_600_000 },
            ...tool,
          },
        },
      },
      { clock, random: seededRandom(SEED) },
    );
    return current;
  }

  async function retriesCounted(app: TestApp): Promise<number> {
    const prom = parsePromText((await send('GET', `${app.url}/metrics`)).body as string);
    return sampleValue(prom, 'bulkhead_retries_total', { tool: TOOL }) ?? 0;
  }

  async function failedAttempts(app: TestApp): Promise<number> {
    return (await send('GET', `${app.url}/v1/circuits`)).body.circuits[TOOL].failures;
  }

  /**
   * Waits until the tool's breaker has counted `count` failed attempts. The service decides
   * on a retry, and sets the timer of its backoff, in the same turn as it counts the failure.
   */
  async function untilFailedAttempts(app: TestApp, count: number): Promise<void> {
    await eventually(async () => expect(await failedAttempts(app)).toBe(count));
  }

  /** After the failed attempt number `failures`, moves the clock through exactly its backoff. */
  async function throughBackoff(app: TestApp, failures: number, waitMs: number): Promise<void> {
    await untilFailedAttempts(app, failures);
    await clock.advanceAsync(waitMs);
    await eventually(() => expect(upstreams[0].requests).toHaveLength(failures + 1));
  }

  describe('transient failures', () => {
    it('answers 200 with attempts N+1 after N failed attempts, each retried after its jittered backoff', async () => {
      const failures = 3;
      const up = await upstream(...Array<UpstreamHandler>(failures).fill(status(503)), json(200, { done: true }));
      const app = await service(up.url('/'));
      const plan = backoffPlan();
      const waits: number[] = [];

      const call = invoke(app.url, TOOL, { n: 1 });
      for (let retry = 1; retry <= failures; retry++) {
        await untilFailedAttempts(app, retry);
        // The call keeps its lane slot while it waits.
        expect((await getLanes(app.url)).main.active).toBe(1);
        const waitMs = plan(retry);
        waits.push(waitMs);
        await clock.advanceAsync(waitMs - 1);
        // One millisecond early, the retry has not started (the counter moves as it starts).
        expect(await retriesCounted(app)).toBe(retry - 1);
        await clock.advanceAsync(1);
        await eventually(() => expect(up.requests).toHaveLength(retry + 1));
      }
      const response = await call;

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ result: { done: true }, attempts: failures + 1, replayed: false });
      expect(up.requests).toHaveLength(failures + 1);
      expect(arrivals).toEqual([0, waits[0], waits[0] + waits[1], waits[0] + waits[1] + waits[2]]);
    });

    it('answers 502 transient with attempts = maxAttempts when every attempt fails', async () => {
      const up = await upstream(status(503));
      const app = await service(up.url('/'), {}, { maxAttempts: 3 });
      const plan = backoffPlan();

      const call = invoke(app.url, TOOL, {});
      await throughBackoff(app, 1, plan(1));
      await throughBackoff(app, 2, plan(2));
      const response = await call;

      const error = expectEnvelope(response, 502, 'transient');
      expect(error).toMatchObject({ attempts: 3, message: `upstream of tool '${TOOL}' answered HTTP 503` });
      expect(up.requests).toHaveLength(3);
    });

    it('does not retry a 400: 400 schema after one upstream request', async () => {
      const up = await upstream(status(400), json(200, { done: true }));
      const app = await service(up.url('/'));

      const response = await invoke(app.url, TOOL, {});

      expect(expectEnvelope(response, 400, 'schema').attempts).toBe(1);
      await clock.advanceAsync(60_000);
      expect(await retriesCounted(app)).toBe(0);
      expect(up.requests).toHaveLength(1);
    });

    it('counts every retry in bulkhead_retries_total of the tool', async () => {
      const up = await upstream(status(503), status(502), json(200, {}), status(503), json(200, {}));
      const app = await service(up.url('/'));
      const plan = backoffPlan();

      const first = invoke(app.url, TOOL, {});
      await throughBackoff(app, 1, plan(1));
      await throughBackoff(app, 2, plan(2));
      expect((await first).body.attempts).toBe(3);
      expect(await retriesCounted(app)).toBe(2);

      const second = invoke(app.url, TOOL, {});
      await throughBackoff(app, 3, plan(1));
      expect((await second).body.attempts).toBe(2);
      expect(await retriesCounted(app)).toBe(3);
    });
  });

  describe('Retry-After', () => {
    /** Long enough for a 3 s Retry-After and a 1 s attempt, too short for a 10 s one. */
    const retry = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 100, deadlineMs: 5000 };

    async function expectRetryAtThreeSeconds(retryAfter: () => string): Promise<void> {
      const up = await upstream(
        (request, response) => status(429, { 'retry-after': retryAfter() })(request, response),
        json(200, { done: true }),
      );
      const app = await service(up.url('/'), { timeoutMs: 1000 }, retry);

      const call = invoke(app.url, TOOL, {});
      await untilFailedAttempts(app, 1);
      await clock.advanceAsync(2999);
      expect(await retriesCounted(app)).toBe(0);
      expect(up.requests).toHaveLength(1);
      await clock.advanceAsync(1);
      const response = await call;

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ result: { done: true }, attempts: 2 });
      expect(arrivals).toEqual([0, 3000]);
    }

    it('waits the seconds of a 429 Retry-After before retrying', async () => {
      await expectRetryAtThreeSeconds(() => '3');
    });

    it('waits until the HTTP date of a 429 Retry-After, read on the injected clock, before retrying', async () => {
      await expectRetryAtThreeSeconds(() => new Date(clock.wallNow() + 3000).toUTCString());
    });

    it('does not retry when the Retry-After ends beyond the deadline: 502 with attempts 1 and Retry-After', async () => {
      const up = await upstream(status(429, { 'retry-after': '10' }), json(200, { done: true }));
      const app = await service(up.url('/'), { timeoutMs: 1000 }, retry);

      const response = await invoke(app.url, TOOL, {});

      const error = expectEnvelope(response, 502, 'transient');
      expect(error).toMatchObject({ attempts: 1, retryAfterMs: 10_000 });
      expect(response.headers['retry-after']).toBe('10');
      await clock.advanceAsync(60_000);
      expect(await retriesCounted(app)).toBe(0);
      expect(up.requests).toHaveLength(1);
    });
  });

  describe('timeouts', () => {
    it('answers 504 timeout at timeoutMs, aborts the upstream request and makes no second attempt when not idempotent', async () => {
      const up = await upstream(hang);
      const app = await service(up.url('/'), { timeoutMs: 1000 });

      const call = invoke(app.url, TOOL, {});
      await eventually(() => expect(up.requests).toHaveLength(1));
      await clock.advanceAsync(999);
      expect(await failedAttempts(app)).toBe(0);
      await clock.advanceAsync(1);
      const response = await call;

      expect(expectEnvelope(response, 504, 'timeout').attempts).toBe(1);
      await eventually(() => expect(up.abandoned).toBe(1));
      await clock.advanceAsync(60_000);
      expect(await retriesCounted(app)).toBe(0);
      expect(up.requests).toHaveLength(1);
    });

    it('retries a timed-out attempt of an idempotent tool once the first request was aborted', async () => {
      const up = await upstream(hang);
      const app = await service(up.url('/'), { timeoutMs: 1000, idempotent: true }, { maxAttempts: 2 });
      const plan = backoffPlan();

      const call = invoke(app.url, TOOL, {});
      await eventually(() => expect(up.requests).toHaveLength(1));
      await clock.advanceAsync(1000);
      await eventually(() => expect(up.abandoned).toBe(1));
      const waitMs = plan(1);
      await throughBackoff(app, 1, waitMs);
      await clock.advanceAsync(999);
      expect(await failedAttempts(app)).toBe(1);
      await clock.advanceAsync(1);
      const response = await call;

      expect(expectEnvelope(response, 504, 'timeout').attempts).toBe(2);
      expect(arrivals).toEqual([0, 1000 + waitMs]);
      await eventually(() => expect(up.abandoned).toBe(2));
      expect(await retriesCounted(app)).toBe(1);
    });

    it('shortens the timeout of every attempt to X-Timeout-Ms', async () => {
      const up = await upstream(hang);
      const app = await service(up.url('/'), { timeoutMs: 5000, idempotent: true }, { maxAttempts: 2 });
      const plan = backoffPlan();

      const call = invoke(app.url, TOOL, {}, { 'x-timeout-ms': '1000' });
      await eventually(() => expect(up.requests).toHaveLength(1));
      await clock.advanceAsync(999);
      expect(up.abandoned).toBe(0);
      await clock.advanceAsync(1);
      // A timeout the caller chose counts nowhere in the breaker (docs/design.md, circuit
      // breakers): the abandoned request shows the attempt ended, its backoff set in the same turn.
      await eventually(() => expect(up.abandoned).toBe(1));
      expect(await failedAttempts(app)).toBe(0);
      await clock.advanceAsync(plan(1));
      await eventually(() => expect(up.requests).toHaveLength(2));
      await clock.advanceAsync(1000);
      const response = await call;

      expect(expectEnvelope(response, 504, 'timeout').attempts).toBe(2);
      expect(response.body.error.message).toContain('1000 ms');
      await eventually(() => expect(up.abandoned).toBe(2));
    });
  });

  describe('the upstream Idempotency-Key', () => {
    it('sends the same scoped key, a 64-hex digest and not the raw key, on every retry', async () => {
      const rawKey = 'order-7731-raw-key';
      const up = await upstream(status(503), status(503), json(200, { done: true }));
      const app = await service(up.url('/'));
      const plan = backoffPlan();

      const call = invoke(app.url, TOOL, {}, { 'idempotency-key': rawKey });
      await throughBackoff(app, 1, plan(1));
      await throughBackoff(app, 2, plan(2));
      expect((await call).body.attempts).toBe(3);

      const sent = up.requests.map((request) => request.headers['idempotency-key']);
      expect(sent).toHaveLength(3);
      expect(new Set(sent).size).toBe(1);
      expect(sent[0]).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(up.requests)).not.toContain(rawKey);
    });

    it('sends no Idempotency-Key for a call without one', async () => {
      const up = await upstream(json(200, { done: true }));
      const app = await service(up.url('/'));

      expect((await invoke(app.url, TOOL, {})).status).toBe(200);

      expect(up.requests[0].headers).not.toHaveProperty('idempotency-key');
    });
  });
});

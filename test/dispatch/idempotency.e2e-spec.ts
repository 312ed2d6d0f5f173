import type { IncomingMessage, ServerResponse } from 'node:http';
import { seededRandom } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { type AbortableRequest, abortableRequest } from '../support/abortable-request';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { type Deferred, deferred, track } from '../support/deferred';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { Upstream, type UpstreamHandler } from '../support/upstream';

const RETENTION_MS = 10_000;
const KEY = 'order-4711-KEY-c0ffee';
/** An argument value that must never come back in an error. */
const CARD = 'card-4111-1111-SECRET';

function status(code: number): UpstreamHandler {
  return (_request, response: ServerResponse) => {
    response.writeHead(code).end();
  };
}

/** Answers the first request with `first`, every later one with `then`. */
function firstThen(first: UpstreamHandler, then: UpstreamHandler): UpstreamHandler {
  let used = false;
  return (request, response) => {
    if (used) return then(request, response);
    used = true;
    return first(request, response);
  };
}

describe('idempotency keys over HTTP', () => {
  let clock: FakeClock;
  let up: Upstream;
  let current: TestApp | undefined;
  /** Shut at the start of each test: the upstream answers once the test opens it. */
  let gate: Deferred<void>;
  let receipts: number;
  const requests: AbortableRequest[] = [];

  /** Answers after `gate` opens, with a receipt numbered by arrival: two runs never answer alike. */
  const gated: UpstreamHandler = async (request, response) => {
    const receipt = `r-${++receipts}`;
    await gate.promise;
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ receipt, path: request.path, args: JSON.parse(request.body) as unknown }));
  };

  beforeEach(async () => {
    clock = new FakeClock();
    gate = deferred();
    receipts = 0;
    up = await Upstream.start(gated);
    current = await createTestApp(
      {
        lanes: { main: { concurrency: 4, queueCapacity: 4 }, solo: { concurrency: 1, queueCapacity: 0 } },
        tools: {
          charge: {
            lane: 'main',
            kind: 'http',
            url: up.url('/charge'),
            timeoutMs: 60_000,
            retry: { maxAttempts: 2, baseDelayMs: 100, maxDelayMs: 100 },
          },
          refund: { lane: 'main', kind: 'http', url: up.url('/refund'), timeoutMs: 60_000 },
          solo_charge: { lane: 'solo', kind: 'http', url: up.url('/solo'), timeoutMs: 60_000 },
        },
        idempotency: { retentionMs: RETENTION_MS },
      },
      { clock, random: seededRandom(7) },
    );
  });

  afterEach(async () => {
    await Promise.all(requests.splice(0).map((request) => request.dispose()));
    // The upstream first: closing it ends any request a failed test left blocked on it.
    await up.close();
    await closeOnFakeClock(current, clock);
    current = undefined;
  });

  function call(toolId: string, args: unknown, key = KEY) {
    return invoke(current!.url, toolId, args, { 'idempotency-key': key });
  }

  /**
   * Counts the invoke requests the app has read to the end of their body. Their call reaches
   * its idempotency decision in the same turn, before the app reads anything else.
   */
  function invokesRead(): () => number {
    let read = 0;
    current!.app.getHttpServer().on('request', (request: IncomingMessage) => {
      if (request.method === 'POST') request.on('end', () => read++);
    });
    return () => read;
  }

  async function replaysCounted(toolId: string): Promise<number> {
    const prom = parsePromText((await send('GET', `${current!.url}/metrics`)).body as string);
    return sampleValue(prom, 'bulkhead_idempotent_replays_total', { tool: toolId }) ?? 0;
  }

  /** After the first attempt of `charge` failed, moves the clock through its backoff (under 100 ms). */
  async function throughFirstBackoff(): Promise<void> {
    await eventually(async () =>
      expect((await send('GET', `${current!.url}/v1/circuits`)).body.circuits.charge.failures).toBe(1),
    );
    await clock.advanceAsync(100);
    await eventually(() => expect(up.requests).toHaveLength(2));
  }

  describe('joining and replaying', () => {
    it('runs two concurrent calls with the same key once and answers both alike, the second replayed', async () => {
      const read = invokesRead();
      const first = call('charge', { amount: 5 });
      await eventually(() => expect(up.requests).toHaveLength(1));
      const second = call('charge', { amount: 5 });
      const joined = track(second);
      await eventually(() => expect(read()).toBe(2));
      expect(joined.state).toBe('pending');

      gate.resolve();
      const [a, b] = await Promise.all([first, second]);

      expect(up.requests).toHaveLength(1);
      expect(a.status).toBe(200);
      expect(b.status).toBe(200);
      expect(a.body).toMatchObject({ replayed: false, attempts: 1 });
      expect(b.body).toMatchObject({ toolId: 'charge', replayed: true, attempts: 1 });
      expect(b.body.result).toEqual(a.body.result);
      expect(a.body.result).toEqual({ receipt: 'r-1', path: '/charge', args: { amount: 5 } });
    });

    it('replays the outcome after completion with the attempts of the original and no new upstream request', async () => {
      up.use(firstThen(status(503), gated));
      const read = invokesRead();
      const first = call('charge', { amount: 5 });
      await throughFirstBackoff();
      const second = call('charge', { amount: 5 });
      await eventually(() => expect(read()).toBe(2));

      gate.resolve();
      const [a, b] = await Promise.all([first, second]);
      const c = await call('charge', { amount: 5 });

      expect(up.requests).toHaveLength(2);
      expect(a.body).toMatchObject({ attempts: 2, replayed: false });
      for (const replay of [b, c]) {
        expect(replay.status).toBe(200);
        expect(replay.body).toMatchObject({ attempts: 2, replayed: true, result: a.body.result });
      }
      expect(c.body.callId).not.toBe(a.body.callId);
    });

    it('replays a call whose arguments come in another key order', async () => {
      gate.resolve();
      const a = await call('charge', { amount: 5, card: { number: CARD, cvc: '123' } });
      const b = await call('charge', { card: { cvc: '123', number: CARD }, amount: 5 });

      expect(b.status).toBe(200);
      expect(b.body).toMatchObject({ replayed: true, result: a.body.result });
      expect(up.requests).toHaveLength(1);
    });

    it('replays a stored error outcome as the same envelope', async () => {
      up.use(firstThen(status(400), gated));
      gate.resolve();

      const a = await call('charge', { amount: 5 });
      const b = await call('charge', { amount: 5 });

      const error = expectEnvelope(a, 400, 'schema');
      expect(expectEnvelope(b, 400, 'schema')).toEqual(error);
      expect(b.body.toolId).toBe('charge');
      expect(up.requests).toHaveLength(1);
    });

    it('counts joins and replays in bulkhead_idempotent_replays_total of the tool', async () => {
      const read = invokesRead();
      const first = call('charge', { amount: 5 });
      await eventually(() => expect(up.requests).toHaveLength(1));
      const joined = call('charge', { amount: 5 });
      await eventually(() => expect(read()).toBe(2));
      gate.resolve();
      await Promise.all([first, joined]);
      expect(await replaysCounted('charge')).toBe(1);

      expect((await call('charge', { amount: 5 })).body.replayed).toBe(true);

      expect(await replaysCounted('charge')).toBe(2);
      expect(await replaysCounted('refund')).toBe(0);
    });
  });

  describe('scope and retention', () => {
    it('runs the same key of two tools separately, with different keys upstream', async () => {
      gate.resolve();

      const charged = await call('charge', { amount: 5 });
      const refunded = await call('refund', { amount: 5 });

      expect(charged.body).toMatchObject({ replayed: false, result: { receipt: 'r-1', path: '/charge' } });
      expect(refunded.body).toMatchObject({ replayed: false, result: { receipt: 'r-2', path: '/refund' } });
      const [a, b] = up.requests.map((request) => request.headers['idempotency-key']);
      expect(a).toMatch(/^[0-9a-f]{64}$/);
      expect(b).toMatch(/^[0-9a-f]{64}$/);
      expect(a).not.toBe(b);
    });

    it('runs the key again once idempotency.retentionMs of virtual time has passed since the call ended', async () => {
      const running = call('charge', { amount: 5 });
      await eventually(() => expect(up.requests).toHaveLength(1));
      await clock.advanceAsync(5000);
      gate.resolve();
      const first = await running;

      await clock.advanceAsync(RETENTION_MS - 1);
      const replayed = await call('charge', { amount: 5 });
      await clock.advanceAsync(1);
      const again = await call('charge', { amount: 5 });

      expect(first.body).toMatchObject({ replayed: false, result: { receipt: 'r-1' } });
      expect(replayed.body).toMatchObject({ replayed: true, result: { receipt: 'r-1' } });
      expect(again.body).toMatchObject({ replayed: false, result: { receipt: 'r-2' } });
      expect(up.requests).toHaveLength(2);
    });

    // Keys are namespaced by tenant, but every caller is `anonymous` until authentication lands.
  });

  describe('refusals', () => {
    it('answers the same key with other arguments 422 idempotency_conflict without echoing either', async () => {
      gate.resolve();
      await call('charge', { amount: 5, card: 'card-original' });

      const response = await call('charge', { amount: 6, card: CARD });

      const error = expectEnvelope(response, 422, 'idempotency_conflict');
      expect(error.jsonrpcCode).toBe(-32004);
      expectNothingLeaked(response, KEY, CARD, 'card-original');
      expect(up.requests).toHaveLength(1);
    });

    it('answers the same key with other arguments 422 while the first call still runs', async () => {
      const first = call('charge', { amount: 5 });
      await eventually(() => expect(up.requests).toHaveLength(1));

      const response = await call('charge', { amount: 6, card: CARD });

      expectEnvelope(response, 422, 'idempotency_conflict');
      expectNothingLeaked(response, KEY, CARD);
      gate.resolve();
      expect((await first).status).toBe(200);
      expect(up.requests).toHaveLength(1);
    });

    it('stores nothing for a call refused by a full lane: the same key runs later', async () => {
      const occupying = invoke(current!.url, 'solo_charge', { holder: true });
      await eventually(() => expect(up.requests).toHaveLength(1));

      const refused = await call('solo_charge', { amount: 5 });
      expect(expectEnvelope(refused, 503, 'queue_full').attempts).toBe(0);

      gate.resolve();
      expect((await occupying).status).toBe(200);
      const later = await call('solo_charge', { amount: 5 });

      expect(later.status).toBe(200);
      expect(later.body).toMatchObject({
        replayed: false,
        attempts: 1,
        result: { receipt: 'r-2', args: { amount: 5 } },
      });
      expect(up.requests).toHaveLength(2);
    });

    it.each([
      ['256 characters', 'k'.repeat(256)],
      ['a space', 'order 4711'],
    ])('refuses a key of %s with 400 invalid_request without echoing it', async (_label, key) => {
      gate.resolve();

      const response = await call('charge', { amount: 5 }, key);

      expectEnvelope(response, 400, 'invalid_request');
      expectNothingLeaked(response, key);
      expect(up.requests).toHaveLength(0);
    });

    it('refuses an empty key with 400 invalid_request', async () => {
      gate.resolve();

      const response = await call('charge', { amount: 5 }, '');

      expectEnvelope(response, 400, 'invalid_request');
      expect(up.requests).toHaveLength(0);
    });

    it('accepts a key of 255 visible characters', async () => {
      gate.resolve();

      const response = await call('charge', { amount: 5 }, `${'k'.repeat(254)}~`);

      expect(response.status).toBe(200);
    });
  });

  describe('a caller that goes away', () => {
    it('still answers a joined caller, and replays to a retry with the key, when the first caller disconnected', async () => {
      const read = invokesRead();
      const leader = abortableRequest('POST', `${current!.url}/v1/tools/charge/invoke`, {
        json: { arguments: { amount: 5 } },
        headers: { 'idempotency-key': KEY },
      });
      requests.push(leader);
      await eventually(() => expect(up.requests).toHaveLength(1));
      const joined = call('charge', { amount: 5 });
      await eventually(() => expect(read()).toBe(2));

      await leader.abort();
      expect((await leader.settled).answer).toBeUndefined();
      gate.resolve();
      const answer = await joined;

      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        replayed: true,
        attempts: 1,
        result: { receipt: 'r-1', args: { amount: 5 } },
      });
      const retried = await call('charge', { amount: 5 });
      expect(retried.body).toMatchObject({ replayed: true, result: { receipt: 'r-1' } });
      expect(up.requests).toHaveLength(1);
      expect(up.abandoned).toBe(0);
    });
  });
});

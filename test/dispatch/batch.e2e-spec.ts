import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { type ContractKind, JSONRPC_CODE, expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { type Response, send } from '../support/http-client';
import { getEvents, getLanes } from '../support/service-reads';
import { json, Upstream, type UpstreamRequest } from '../support/upstream';
import { createHash } from 'node:crypto';

const TENANT_KEY = 'acme-key-0123456789';
const AS_TENANT = { authorization: `Bearer ${TENANT_KEY}` };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * An upstream handler that holds every request until the test releases it, then answers the
 * request's own JSON body back, so a result shows which call it belongs to.
 */
class Gate {
  private readonly held = new Map<number, Array<() => void>>();
  private open = false;

  readonly handler = async (request: UpstreamRequest, response: ServerResponse): Promise<void> => {
    if (!this.open) {
      const n = Number((JSON.parse(request.body || '{}') as { n?: unknown }).n);
      await new Promise<void>((release) => this.held.set(n, [...(this.held.get(n) ?? []), release]));
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(request.body || '{}');
  };

  /** Answers the held request of the call with arguments `{ n }`. */
  release(n: number): void {
    const waiting = this.held.get(n);
    if (!waiting?.length) throw new Error(`no request with n=${n} is held`);
    waiting.shift()!();
  }

  /** Answers every held request, and every later one at once. */
  releaseAll(): void {
    this.open = true;
    for (const waiting of this.held.values()) for (const release of waiting.splice(0)) release();
  }
}

/** An error envelope in a batch's results, as a body of its own. */
function entryEnvelope(result: unknown, kind: ContractKind) {
  const entry = result as { error?: { kind?: string } };
  expect(entry.error?.kind).toBe(kind);
  expect(['callId', 'error', 'toolId']).toEqual(expect.arrayContaining(Object.keys(entry)));
  expect(entry.error).toMatchObject({ kind, message: expect.any(String), jsonrpcCode: JSONRPC_CODE[kind] });
  return entry as { error: { kind: string; message: string; attempts: number }; callId?: string; toolId?: string };
}

const calls = (count: number, toolId: string) =>
  Array.from({ length: count }, (_, n) => ({ toolId, arguments: { n } }));

describe.each(PLATFORMS)('POST /v1/tools/batch, on %s', (platform) => {
  let clock: FakeClock;
  let gate: Gate;
  let upstreams: Upstream[] = [];
  let current: TestApp | undefined;
  /** The gated upstream behind `slow` and `narrow`. */
  let held: Upstream;
  /** Always 503, behind `failing`. */
  let broken: Upstream;
  /** Counts its requests and answers the count, behind `charge`. */
  let counting: Upstream;
  let url: string;

  /** Sent as a configured tenant, so its calls take the normal pool (an anonymous caller's go to the isolated one). */
  const batch = (body: unknown): Promise<Response> =>
    send('POST', `${url}/v1/tools/batch`, { json: body, headers: AS_TENANT });

  beforeEach(async () => {
    gate = new Gate();
    held = await Upstream.start(gate.handler);
    broken = await Upstream.start(json(503, { down: true }));
    let charged = 0;
    counting = await Upstream.start((_request, response) => {
      charged++;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ charge: charged }));
    });
    upstreams = [held, broken, counting];
    clock = new FakeClock();
    // Lanes big enough that the batch's own concurrency is what limits, except `narrow`.
    current = await createTestApp(
      {
        auth: { apiKeys: [{ sha256: sha256(TENANT_KEY), tenant: 'acme' }] },
        lanes: {
          main: { concurrency: 64, queueCapacity: 256 },
          narrow: { concurrency: 3, queueCapacity: 256 },
        },
        tools: {
          read: { lane: 'main', kind: 'builtin', builtin: 'echo' },
          wait: { lane: 'main', kind: 'builtin', builtin: 'delay' },
          slow: { lane: 'main', kind: 'http', url: held.url('/slow'), retry: { maxAttempts: 1 } },
          narrow: { lane: 'narrow', kind: 'http', url: held.url('/narrow'), retry: { maxAttempts: 1 } },
          failing: { lane: 'main', kind: 'http', url: broken.url('/'), retry: { maxAttempts: 1 } },
          charge: { lane: 'main', kind: 'http', url: counting.url('/charge'), retry: { maxAttempts: 1 } },
        },
      },
      { clock, platform },
    );
    url = current.url;
  });

  afterEach(async () => {
    gate.releaseAll();
    for (const started of upstreams) await started.close();
    upstreams = [];
    await closeOnFakeClock(current, clock);
    current = undefined;
  });

  describe('results', () => {
    it('answers each call in its place: a success body or its own error envelope', async () => {
      const response = await batch({
        calls: [
          { toolId: 'read', arguments: { q: 'first' }, callId: 'e-0' },
          { toolId: 'no_such_tool', arguments: {}, callId: 'e-1' },
          { toolId: 'read', arguments: ['not', 'an', 'object'], callId: 'e-2' },
          { toolId: 'failing', arguments: {}, callId: 'e-3' },
          { toolId: 'wait', arguments: { ms: 'soon' }, callId: 'e-4' },
          { toolId: 'read', callId: 'e-5' },
        ],
      });

      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['results']);
      const { results } = response.body;
      expect(results).toHaveLength(6);
      expect(results[0]).toEqual({
        callId: 'e-0',
        toolId: 'read',
        lane: 'main',
        pool: 'normal',
        result: { q: 'first' },
        attempts: 1,
        durationMs: expect.any(Number),
        replayed: false,
      });
      expect(entryEnvelope(results[1], 'not_found')).toMatchObject({
        error: { message: "unknown tool 'no_such_tool'", attempts: 0 },
        callId: 'e-1',
      });
      expect(entryEnvelope(results[2], 'invalid_request')).toMatchObject({
        error: { attempts: 0 },
        callId: 'e-2',
        toolId: 'read',
      });
      expect(entryEnvelope(results[3], 'transient')).toMatchObject({
        error: { attempts: 1 },
        callId: 'e-3',
        toolId: 'failing',
      });
      expect(entryEnvelope(results[4], 'schema')).toMatchObject({ callId: 'e-4', toolId: 'wait' });
      expect(results[5]).toMatchObject({ callId: 'e-5', toolId: 'read', result: {}, attempts: 1 });
      expect(broken.requests).toHaveLength(1);
    });

    it('keeps call order, not the order the calls finish in', async () => {
      const answer = batch({ calls: calls(2, 'slow'), concurrency: 2 });
      await eventually(() => expect(held.inFlight).toBe(2));

      gate.release(1);
      await eventually(() => expect(held.inFlight).toBe(1));
      gate.release(0);
      const response = await answer;

      expect(response.status).toBe(200);
      expect(response.body.results.map((result: { result: unknown }) => result.result)).toEqual([{ n: 0 }, { n: 1 }]);
    });

    it('answers an empty list of calls with an empty list of results', async () => {
      const response = await batch({ calls: [] });

      expect(response.status).toBe(200);
      expect(response.body).toEqual({ results: [] });
    });

    it('runs 256 calls, the most a batch may hold', async () => {
      const response = await batch({ calls: calls(256, 'read'), concurrency: 64 });

      expect(response.status).toBe(200);
      expect(response.body.results).toHaveLength(256);
      expect(response.body.results.map((result: { result: { n: number } }) => result.result.n)).toEqual(
        Array.from({ length: 256 }, (_, n) => n),
      );
    });

    it.each([
      ['a string', 'x'],
      ['a number', 7],
      ['null', null],
      ['a list', ['read']],
      ['an object with an extra key', { toolId: 'read', arguments: {}, timeoutMs: 5 }],
    ])('answers an entry that is %s with invalid_request in its place', async (_label, entry) => {
      const response = await batch({ calls: [{ toolId: 'read', arguments: { n: 0 } }, entry] });

      expect(response.status).toBe(200);
      const [first, second] = response.body.results;
      expect(first).toMatchObject({ toolId: 'read', result: { n: 0 } });
      expect(entryEnvelope(second, 'invalid_request').error.attempts).toBe(0);
    });
  });

  describe('call ids', () => {
    it('uses each entry’s callId in its result, and a new one for an entry without', async () => {
      const response = await batch({
        calls: [
          { toolId: 'read', arguments: {}, callId: 'mine-1' },
          { toolId: 'read', arguments: {} },
          { toolId: 'no_such_tool', callId: 'mine-3' },
        ],
      });

      const [first, second, third] = response.body.results;
      expect(first.callId).toBe('mine-1');
      expect(second.callId).toMatch(/^[A-Za-z0-9_-]{1,48}$/);
      expect(second.callId).not.toBe('mine-1');
      expect(third.callId).toBe('mine-3');
      expect(response.headers['x-call-id']).not.toBe('mine-1');
    });

    it.each([
      ['one with a space', 'has space-7', 'has space-7'],
      ['one of 49 characters', 'Q'.repeat(49), 'Q'.repeat(49)],
      ['one with markup', '<b>x</b>', '<b>'],
      ['a number', 4242424242, '4242424242'],
      ['an empty string', '', undefined],
    ])(
      'answers an entry whose callId is %s with invalid_request in place, echoing it nowhere',
      async (_l, id, needle) => {
        const response = await batch({
          calls: [
            { toolId: 'read', arguments: { n: 0 }, callId: 'fine-0' },
            { toolId: 'read', arguments: { n: 1 }, callId: id },
            { toolId: 'read', arguments: { n: 2 }, callId: 'fine-2' },
          ],
        });

        expect(response.status).toBe(200);
        const [first, second, third] = response.body.results;
        expect(first).toMatchObject({ callId: 'fine-0', result: { n: 0 } });
        expect(third).toMatchObject({ callId: 'fine-2', result: { n: 2 } });
        const envelope = entryEnvelope(second, 'invalid_request');
        expect(envelope.callId).toBeUndefined();
        expect(envelope.error.attempts).toBe(0);
        if (needle !== undefined) expectNothingLeaked(response, needle);
        expect((await getEvents(url, undefined, AS_TENANT)).map((event) => event.callId).sort()).toEqual([
          'fine-0',
          'fine-2',
        ]);
      },
    );
  });

  describe('concurrency', () => {
    it('has at most 8 calls in flight by default', async () => {
      const answer = batch({ calls: calls(20, 'slow') });
      await eventually(() => expect(held.inFlight).toBe(8));
      expect((await getLanes(url)).main).toMatchObject({ active: 8, waiting: 0 });

      // One finishing lets exactly one more start.
      gate.release(0);
      await eventually(() => expect(held.requests).toHaveLength(9));
      expect(held.inFlight).toBe(8);
      gate.releaseAll();
      const response = await answer;

      expect(response.status).toBe(200);
      expect(response.body.results).toHaveLength(20);
      expect(response.body.results.every((result: { attempts?: number }) => result.attempts === 1)).toBe(true);
      expect(held.requests).toHaveLength(20);
      expect(held.peakInFlight).toBe(8);
      expect((await getLanes(url)).main.peakActive).toBe(8);
    });

    it('has at most `concurrency` calls in flight when the batch says so', async () => {
      const answer = batch({ calls: calls(6, 'slow'), concurrency: 2 });
      await eventually(() => expect(held.inFlight).toBe(2));
      expect(held.requests.map((request) => JSON.parse(request.body).n).sort()).toEqual([0, 1]);

      gate.release(1);
      await eventually(() => expect(held.requests).toHaveLength(3));
      expect(held.inFlight).toBe(2);
      gate.releaseAll();
      const response = await answer;

      expect(response.body.results.map((result: { result: unknown }) => result.result)).toEqual(
        Array.from({ length: 6 }, (_, n) => ({ n })),
      );
      expect(held.peakInFlight).toBe(2);
    });

    it('still holds the calls to a lane’s limit: the rest wait in its queue', async () => {
      const answer = batch({ calls: calls(10, 'narrow') });
      await eventually(async () => expect((await getLanes(url)).narrow).toMatchObject({ active: 3, waiting: 5 }));
      await eventually(() => expect(held.inFlight).toBe(3));

      gate.releaseAll();
      const response = await answer;

      expect(response.status).toBe(200);
      expect(response.body.results.map((result: { result: unknown }) => result.result)).toEqual(
        Array.from({ length: 10 }, (_, n) => ({ n })),
      );
      expect(held.peakInFlight).toBe(3);
      expect((await getLanes(url)).narrow).toMatchObject({ active: 0, waiting: 0, peakActive: 3 });
    });
  });

  describe('a request that is not a batch', () => {
    it.each([
      ['a list', [{ toolId: 'slow', arguments: {} }]],
      ['a string', 'calls'],
      ['null', null],
      ['an object with an extra key', { calls: [{ toolId: 'slow', arguments: {} }], timeoutMs: 10 }],
      ['an object without calls', { concurrency: 2 }],
      ['calls that are an object', { calls: { 0: { toolId: 'slow', arguments: {} } } }],
      ['calls that are a string', { calls: 'slow' }],
      ['more than 256 calls', { calls: calls(257, 'slow') }],
      ['concurrency 0', { calls: calls(1, 'slow'), concurrency: 0 }],
      ['concurrency 65', { calls: calls(1, 'slow'), concurrency: 65 }],
      ['concurrency 1.5', { calls: calls(1, 'slow'), concurrency: 1.5 }],
      ['concurrency "2"', { calls: calls(1, 'slow'), concurrency: '2' }],
      ['concurrency null', { calls: calls(1, 'slow'), concurrency: null }],
    ])('refuses %s as a whole with 400 invalid_request and runs nothing', async (_label, body) => {
      const response = await batch(body);

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error.attempts).toBe(0);
      expect(held.requests).toHaveLength(0);
      expect(await getEvents(url, undefined, AS_TENANT)).toEqual([]);
    });

    it('accepts concurrency 1 and 64, the ends of the range', async () => {
      for (const concurrency of [1, 64]) {
        const response = await batch({ calls: calls(3, 'read'), concurrency });
        expect(response.status).toBe(200);
        expect(response.body.results).toHaveLength(3);
      }
    });
  });

  describe('idempotency keys', () => {
    it('runs two entries with the same key and arguments once: one upstream request, one replayed', async () => {
      const response = await batch({
        calls: [
          { toolId: 'charge', arguments: { usd: 5 }, idempotencyKey: 'order-77', callId: 'pay-1' },
          { toolId: 'charge', arguments: { usd: 5 }, idempotencyKey: 'order-77', callId: 'pay-2' },
        ],
      });

      expect(response.status).toBe(200);
      const [first, second] = response.body.results;
      expect(first).toMatchObject({ callId: 'pay-1', result: { charge: 1 } });
      expect(second).toMatchObject({ callId: 'pay-2', result: { charge: 1 } });
      expect([first.replayed, second.replayed].sort()).toEqual([false, true]);
      expect(counting.requests).toHaveLength(1);
    });

    it('replays the outcome to a later batch with the same key', async () => {
      const entry = { toolId: 'charge', arguments: { usd: 5 }, idempotencyKey: 'order-78' };
      const first = await batch({ calls: [entry] });
      const second = await batch({ calls: [entry] });

      expect(first.body.results[0]).toMatchObject({ result: { charge: 1 }, replayed: false });
      expect(second.body.results[0]).toMatchObject({ result: { charge: 1 }, replayed: true });
      expect(counting.requests).toHaveLength(1);
    });

    it('answers the same key with other arguments with idempotency_conflict in its place', async () => {
      await batch({ calls: [{ toolId: 'charge', arguments: { usd: 5 }, idempotencyKey: 'order-79' }] });

      const response = await batch({
        calls: [
          { toolId: 'charge', arguments: { usd: 500 }, idempotencyKey: 'order-79', callId: 'changed' },
          { toolId: 'read', arguments: { n: 1 } },
        ],
      });

      expect(entryEnvelope(response.body.results[0], 'idempotency_conflict')).toMatchObject({
        callId: 'changed',
        toolId: 'charge',
      });
      expect(response.body.results[1]).toMatchObject({ result: { n: 1 } });
      expect(counting.requests).toHaveLength(1);
    });

    it('answers an invalid idempotencyKey with invalid_request in its place, echoing it nowhere', async () => {
      const response = await batch({
        calls: [{ toolId: 'charge', arguments: { usd: 5 }, idempotencyKey: 'has space' }, calls(1, 'read')[0]],
      });

      expect(entryEnvelope(response.body.results[0], 'invalid_request').error.attempts).toBe(0);
      expectNothingLeaked(response, 'has space');
      expect(response.body.results[1]).toMatchObject({ result: { n: 0 } });
      expect(counting.requests).toHaveLength(0);
    });
  });

  describe('the event ledger', () => {
    it('has a line for each call of the batch, with its callId, tool, lane and status', async () => {
      const response = await batch({
        calls: [
          { toolId: 'read', arguments: { secret: 'sk-live-123' }, callId: 'ev-ok' },
          { toolId: 'failing', arguments: {}, callId: 'ev-transient' },
          { toolId: 'wait', arguments: { ms: 'soon' }, callId: 'ev-schema' },
          { toolId: 'charge', arguments: { usd: 1 }, idempotencyKey: 'k-1', callId: 'ev-lead' },
          { toolId: 'charge', arguments: { usd: 1 }, idempotencyKey: 'k-1', callId: 'ev-replay' },
        ],
      });
      expect(response.status).toBe(200);

      const events = await getEvents(url, undefined, AS_TENANT);

      const lines = events.map(({ callId, toolId, lane, tenant, status }) => ({
        callId,
        toolId,
        lane,
        tenant,
        status,
      }));
      expect(lines).toEqual(
        expect.arrayContaining([
          { callId: 'ev-ok', toolId: 'read', lane: 'main', tenant: 'acme', status: 'ok' },
          { callId: 'ev-transient', toolId: 'failing', lane: 'main', tenant: 'acme', status: 'transient' },
          { callId: 'ev-schema', toolId: 'wait', lane: 'main', tenant: 'acme', status: 'schema' },
          { callId: 'ev-lead', toolId: 'charge', lane: 'main', tenant: 'acme', status: 'ok' },
          { callId: 'ev-replay', toolId: 'charge', lane: 'main', tenant: 'acme', status: 'ok' },
        ]),
      );
      expect(lines).toHaveLength(5);
      expect(JSON.stringify(events)).not.toContain('sk-live-123');
    });
  });
});

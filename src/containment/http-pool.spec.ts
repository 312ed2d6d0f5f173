import type { Socket } from 'node:net';
import { type Deferred, deferred, track } from '../../test/support/deferred';
import { eventually } from '../../test/support/eventually';
import { json, Upstream, type UpstreamHandler } from '../../test/support/upstream';
import { isResilienceError, LazyAbortController, SystemClock } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import type { PoolName } from './containment-decision';
import { EgressPolicy, type EgressRules, type Lookup } from './egress';
import { HttpPool, type HttpPoolSettings } from './http-pool';

const LOOPBACK_OPEN: EgressRules = { allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.0/8'] };
const TIMEOUT_MS = 30_000;

const upstreams: Upstream[] = [];
const pools: HttpPool[] = [];
/** Upstream answers still held back; released before anything closes. */
const held: Deferred<void>[] = [];

afterEach(async () => {
  for (const gate of held.splice(0)) gate.resolve();
  // Upstreams first: a pool's close waits for its requests in flight, which end with their sockets.
  await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

async function upstream(handler?: UpstreamHandler): Promise<Upstream> {
  const started = await Upstream.start(handler);
  upstreams.push(started);
  return started;
}

function pool(
  settings: Partial<HttpPoolSettings> = {},
  options: { rules?: EgressRules; clock?: FakeClock | SystemClock; lookup?: Lookup } = {},
): HttpPool {
  const created = new HttpPool(
    {
      name: 'normal' as PoolName,
      maxConcurrency: 4,
      timeoutMs: TIMEOUT_MS,
      pooledConnectionLifetimeMs: 60_000,
      ...settings,
    },
    new EgressPolicy(options.rules ?? LOOPBACK_OPEN),
    options.clock ?? new FakeClock(),
    options.lookup,
  );
  pools.push(created);
  return created;
}

/** An upstream handler that holds each answer (the request path as body) until released by path. */
function heldAnswers(): { handler: UpstreamHandler; release(path: string): void } {
  const gates = new Map<string, Deferred<void>>();
  const gate = (path: string) => {
    let found = gates.get(path);
    if (!found) {
      found = deferred();
      gates.set(path, found);
      held.push(found);
    }
    return found;
  };
  return {
    handler: async (request, response) => {
      await gate(request.path).promise;
      response.writeHead(200, { 'content-type': 'text/plain' }).end(request.path);
    },
    release: (path) => gate(path).resolve(),
  };
}

/** The rejection of `promise`; fails the test if it fulfils. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

async function expectKind(promise: Promise<unknown>, kind: string): Promise<void> {
  const error = await rejection(promise);
  expect(isResilienceError(error)).toBe(true);
  expect(error).toMatchObject({ kind });
}

const signal = () => new AbortController().signal;

describe('HttpPool', () => {
  describe('requests', () => {
    it('sends a request through to the upstream and answers its status, headers and body', async () => {
      const target = await upstream(json(201, { created: 'ord_1' }, { 'x-upstream': 'orders' }));
      const subject = pool({}, { clock: new SystemClock() });

      const response = await subject.request(target.url('/orders?page=2'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': 'r-1' },
        body: JSON.stringify({ sku: 'A-1', quantity: 2 }),
        signal: signal(),
      });

      expect(response.statusCode).toBe(201);
      expect(response.headers['content-type']).toBe('application/json');
      expect(response.headers['x-upstream']).toBe('orders');
      expect(JSON.parse(response.body.toString('utf8'))).toEqual({ created: 'ord_1' });
      expect(target.requests).toHaveLength(1);
      expect(target.requests[0]).toMatchObject({
        method: 'POST',
        path: '/orders?page=2',
        body: JSON.stringify({ sku: 'A-1', quantity: 2 }),
      });
      expect(target.requests[0].headers['x-request-id']).toBe('r-1');
    });

    it('sends GET when no method is given', async () => {
      const target = await upstream();
      const subject = pool();

      await subject.request(target.url('/ping'), { signal: signal() });

      expect(target.requests[0]).toMatchObject({ method: 'GET', path: '/ping' });
    });

    it('answers an upstream error status as a response, not a failure', async () => {
      const target = await upstream(json(503, { error: 'busy' }));
      const subject = pool();

      const response = await subject.request(target.url(), { signal: signal() });

      expect(response.statusCode).toBe(503);
      expect(JSON.parse(response.body.toString('utf8'))).toEqual({ error: 'busy' });
    });

    it('does not follow a redirect', async () => {
      const elsewhere = await upstream();
      const target = await upstream((_request, response) => {
        response.writeHead(302, { location: elsewhere.url('/moved') }).end();
      });
      const subject = pool();

      const response = await subject.request(target.url('/old'), { signal: signal() });

      expect(response.statusCode).toBe(302);
      expect(response.headers.location).toBe(elsewhere.url('/moved'));
      expect(elsewhere.connections).toBe(0);
    });

    it('resolves a host name with its lookup and connects to the allowed address', async () => {
      const target = await upstream();
      const asked: string[] = [];
      const lookup: Lookup = async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      };
      const subject = pool({}, { lookup });

      const response = await subject.request(`http://orders.internal.test:${target.port}/x`, { signal: signal() });

      expect(response.statusCode).toBe(200);
      expect(asked).toEqual(['orders.internal.test']);
      expect(target.requests[0].headers.host).toBe(`orders.internal.test:${target.port}`);
    });
  });

  describe('concurrency', () => {
    it('keeps at most maxConcurrency requests at the upstream; the rest wait and then go through', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const subject = pool({ maxConcurrency: 2 });
      const paths = ['/1', '/2', '/3', '/4', '/5'];

      const outcomes = paths.map((path) => track(subject.request(target.url(path), { signal: signal() })));

      await eventually(() => expect(target.requests).toHaveLength(2));
      expect(target.inFlight).toBe(2);
      expect(subject.snapshot()).toEqual({ active: 2, peak: 2, concurrency: 2 });
      expect(outcomes.map((outcome) => outcome.state)).toEqual(Array(5).fill('pending'));

      for (const [index, path] of paths.entries()) {
        answers.release(path);
        await eventually(() => expect(outcomes[index].state).toBe('fulfilled'));
        const expectedArrived = Math.min(index + 3, paths.length);
        await eventually(() => expect(target.requests).toHaveLength(expectedArrived));
        expect(target.inFlight).toBeLessThanOrEqual(2);
      }

      expect(outcomes.map((outcome) => outcome.value?.body.toString('utf8'))).toEqual(paths);
      expect(target.peakInFlight).toBe(2);
      expect(target.requests.slice(2).map((request) => request.path)).toEqual(['/3', '/4', '/5']);
      expect(subject.snapshot()).toEqual({ active: 0, peak: 2, concurrency: 2 });
    });

    it('releases the permit of a request that failed, for the next one', async () => {
      const target = await upstream((request, response) => {
        if (request.path === '/big') response.writeHead(200).end(Buffer.alloc(4096));
        else response.writeHead(200).end('small');
      });
      const subject = pool({ maxConcurrency: 1 });

      await expectKind(subject.request(target.url('/big'), { signal: signal(), maxResponseBytes: 1024 }), 'transient');
      const next = await subject.request(target.url('/small'), { signal: signal() });

      expect(next.body.toString('utf8')).toBe('small');
      expect(subject.snapshot().active).toBe(0);
    });

    it('takes a waiting request whose signal aborts out of the queue; it never reaches the upstream', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const subject = pool({ maxConcurrency: 1 });
      const first = track(subject.request(target.url('/first'), { signal: signal() }));
      await eventually(() => expect(target.requests).toHaveLength(1));
      const caller = new AbortController();
      const waiting = subject.request(target.url('/abandoned'), { signal: caller.signal });
      const reason = new Error('the caller left');

      caller.abort(reason);

      await expect(waiting).rejects.toBe(reason);
      answers.release('/first');
      await eventually(() => expect(first.state).toBe('fulfilled'));
      answers.release('/third');
      const third = await subject.request(target.url('/third'), { signal: signal() });
      expect(third.body.toString('utf8')).toBe('/third');
      expect(target.requests.map((request) => request.path)).toEqual(['/first', '/third']);
      expect(subject.snapshot()).toMatchObject({ active: 0, peak: 1 });
    });

    it('refuses a request whose signal has already aborted without reaching the upstream', async () => {
      const target = await upstream();
      const subject = pool();
      const caller = new AbortController();
      const reason = new Error('already gone');
      caller.abort(reason);

      await expect(subject.request(target.url(), { signal: caller.signal })).rejects.toBe(reason);
      expect(target.connections).toBe(0);
    });

    it('expires a request that waited timeoutMs of the clock for a permit; it never reaches the upstream', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const clock = new FakeClock();
      const subject = pool({ maxConcurrency: 1, timeoutMs: 5_000 }, { clock });
      const first = track(subject.request(target.url('/first'), { signal: signal() }));
      await eventually(() => expect(target.requests).toHaveLength(1));
      const waiting = track(subject.request(target.url('/late'), { signal: signal() }));

      clock.advance(4_999);
      await settle();
      expect(waiting.state).toBe('pending');
      clock.advance(1);
      await eventually(() => expect(waiting.state).toBe('rejected'));

      expect(waiting.reason).toMatchObject({ kind: 'queue_expired' });
      answers.release('/first');
      await eventually(() => expect(first.state).toBe('fulfilled'));
      expect(target.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it('refuses with queue_full instead of queueing without bound', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const subject = pool({ maxConcurrency: 1 });
      const outcomes = Array.from({ length: 200 }, (_, index) =>
        track(subject.request(target.url(`/${index}`), { signal: signal() })),
      );
      await eventually(() => expect(target.requests).toHaveLength(1));
      await settle();

      const refused = outcomes.filter((outcome) => outcome.state === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      for (const outcome of refused) expect(outcome.reason).toMatchObject({ kind: 'queue_full' });
      expect(target.peakInFlight).toBe(1);
    });
  });

  describe('stopped by an Abortable instead of a signal (requestAbortable: an attempt of ctx.http)', () => {
    it('sends the request and answers it like request()', async () => {
      const target = await upstream(json(200, { ok: true }));
      const subject = pool();

      const response = await subject.requestAbortable(
        target.url('/plain'),
        { method: 'POST', body: '{}' },
        new LazyAbortController(),
      );

      expect(response.statusCode).toBe(200);
      expect(JSON.parse(response.body.toString('utf8'))).toEqual({ ok: true });
      expect(target.requests.map((request) => request.path)).toEqual(['/plain']);
    });

    it('abandons a request in flight when its Abortable aborts: the upstream sees the connection go', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const subject = pool();
      const abort = new LazyAbortController();
      const sent = subject.requestAbortable(target.url('/hung'), {}, abort);
      await eventually(() => expect(target.requests).toHaveLength(1));
      const reason = new Error('the attempt timed out');

      abort.abort(reason);

      await expect(sent).rejects.toBe(reason);
      await eventually(() => expect(target.abandoned).toBe(1));
      await eventually(() => expect(subject.snapshot().active).toBe(0));
    });

    it('takes a waiting request whose Abortable aborts out of the queue; it never reaches the upstream', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const subject = pool({ maxConcurrency: 1 });
      const first = track(subject.request(target.url('/first'), { signal: signal() }));
      await eventually(() => expect(target.requests).toHaveLength(1));
      const abort = new LazyAbortController();
      const waiting = subject.requestAbortable(target.url('/abandoned'), {}, abort);
      const reason = new Error('the caller left');

      abort.abort(reason);

      await expect(waiting).rejects.toBe(reason);
      answers.release('/first');
      await eventually(() => expect(first.state).toBe('fulfilled'));
      expect(target.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it('refuses a request whose Abortable has already aborted without connecting', async () => {
      const target = await upstream();
      const subject = pool();
      const abort = new LazyAbortController();
      const reason = new Error('already gone');
      abort.abort(reason);

      await expect(subject.requestAbortable(target.url(), {}, abort)).rejects.toBe(reason);
      expect(target.connections).toBe(0);
    });
  });

  describe('URLs', () => {
    it('answers invalid_request for a URL that does not parse, every time', async () => {
      const subject = pool();

      await expectKind(subject.request('not a url', { signal: signal() }), 'invalid_request');
      await expectKind(subject.request('not a url', { signal: signal() }), 'invalid_request');
    });

    it('keeps refusing a denied URL after allowed ones were sent: only allowed URLs are remembered', async () => {
      const target = await upstream();
      const subject = pool({}, { rules: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } });
      const denied = `http://localhost:${target.port}/`;

      await subject.request(target.url('/a'), { signal: signal() });
      await expectKind(subject.request(denied, { signal: signal() }), 'egress_denied');
      await subject.request(target.url('/a'), { signal: signal() });
      await expectKind(subject.request(denied, { signal: signal() }), 'egress_denied');

      expect(target.requests.map((request) => request.path)).toEqual(['/a', '/a']);
    });

    it('sends the query string and drops the fragment, as undici does', async () => {
      const target = await upstream();
      const subject = pool();

      await subject.request(target.url('/search?q=a%20b&n=1#part'), { signal: signal() });

      expect(target.requests.map((request) => request.path)).toEqual(['/search?q=a%20b&n=1']);
    });

    it('sends each of many distinct URLs where it says, past the number it remembers', async () => {
      const target = await upstream();
      const subject = pool({ maxConcurrency: 64 });

      for (let batch = 0; batch < 11; batch++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, index) =>
            subject.request(target.url(`/n/${batch * 100 + index}`), { signal: signal() }),
          ),
        );
      }

      expect(new Set(target.requests.map((request) => request.path)).size).toBe(1_100);
    });
  });

  describe('response size', () => {
    it('fails an answer larger than maxResponseBytes as transient', async () => {
      const target = await upstream((_request, response) => {
        response.writeHead(200).end(Buffer.alloc(2048, 'a'));
      });
      const subject = pool();

      await expectKind(subject.request(target.url(), { signal: signal(), maxResponseBytes: 1024 }), 'transient');
    });

    it('accepts an answer of exactly maxResponseBytes', async () => {
      const target = await upstream((_request, response) => {
        response.writeHead(200).end(Buffer.alloc(1024, 'a'));
      });
      const subject = pool();

      const response = await subject.request(target.url(), { signal: signal(), maxResponseBytes: 1024 });

      expect(response.body).toHaveLength(1024);
    });

    it('fails an answer larger than 1 MiB as transient by default', async () => {
      const target = await upstream((_request, response) => {
        response.writeHead(200).end(Buffer.alloc(1024 * 1024 + 1, 'a'));
      });
      const subject = pool();

      await expectKind(subject.request(target.url(), { signal: signal() }), 'transient');
    });
  });

  describe('egress', () => {
    it.each(['ftp://127.0.0.1:21/file', 'file:///etc/passwd', 'ws://127.0.0.1:{port}/', 'data:text/plain,hi'])(
      'refuses %s with egress_denied before any connection',
      async (url) => {
        const target = await upstream();
        const subject = pool();

        await expectKind(
          subject.request(url.replace('{port}', String(target.port)), { signal: signal() }),
          'egress_denied',
        );
        expect(target.connections).toBe(0);
      },
    );

    it('refuses a host outside allowHosts with egress_denied before any connection', async () => {
      const target = await upstream();
      const asked: string[] = [];
      const lookup: Lookup = async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      };
      const subject = pool(
        {},
        { rules: { allowHosts: ['api.partner.test'], allowPrivateCidrs: ['127.0.0.0/8'] }, lookup },
      );

      for (const url of [target.url(), `http://localhost:${target.port}/`, `http://other.test:${target.port}/`]) {
        await expectKind(subject.request(url, { signal: signal() }), 'egress_denied');
      }
      expect(target.connections).toBe(0);
      expect(asked).toEqual([]);
    });

    it('connects to a host in allowHosts', async () => {
      const target = await upstream();
      const lookup: Lookup = async () => [{ address: '127.0.0.1', family: 4 }];
      const subject = pool(
        {},
        { rules: { allowHosts: ['api.partner.test'], allowPrivateCidrs: ['127.0.0.0/8'] }, lookup },
      );

      const response = await subject.request(`http://API.Partner.test.:${target.port}/`, { signal: signal() });

      expect(response.statusCode).toBe(200);
      expect(target.connections).toBe(1);
    });

    it('refuses a loopback address not opened by allowPrivateCidrs, with no connection', async () => {
      const target = await upstream();
      const lookup: Lookup = async () => [{ address: '127.0.0.1', family: 4 }];
      const subject = pool({}, { rules: { allowHosts: ['*'], allowPrivateCidrs: [] }, lookup });

      await expectKind(subject.request(target.url(), { signal: signal() }), 'egress_denied');
      await expectKind(subject.request(`http://2130706433:${target.port}/`, { signal: signal() }), 'egress_denied');
      await expectKind(subject.request(`http://localhost:${target.port}/`, { signal: signal() }), 'egress_denied');
      expect(target.connections).toBe(0);
      expect(subject.snapshot().active).toBe(0);
    });

    it.each(['not a url', '', 'http://', '//127.0.0.1/x', '/relative/path'])(
      "refuses the invalid URL '%s' with invalid_request",
      async (url) => {
        const subject = pool();

        await expectKind(subject.request(url, { signal: signal() }), 'invalid_request');
      },
    );
  });

  describe('separate pools', () => {
    it('never shares a socket between two pools', async () => {
      const target = await upstream();
      const normal = pool({ name: 'normal' });
      const isolated = pool({ name: 'isolated', maxConcurrency: 2 });

      // One at a time, alternating: each pool has an idle keep-alive socket when the other sends.
      for (let round = 0; round < 3; round++) {
        await normal.request(target.url(`/normal/${round}`), { signal: signal() });
        await isolated.request(target.url(`/isolated/${round}`), { signal: signal() });
      }
      // Then at once.
      await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          (index % 2 === 0 ? normal : isolated).request(
            target.url(`/${index % 2 === 0 ? 'normal' : 'isolated'}/c${index}`),
            {
              signal: signal(),
            },
          ),
        ),
      );

      const ports = (prefix: string) =>
        new Set(target.requests.filter((request) => request.path.startsWith(prefix)).map((r) => r.remotePort));
      const normalPorts = ports('/normal/');
      const isolatedPorts = ports('/isolated/');
      expect(target.requests).toHaveLength(14);
      expect(normalPorts.size).toBeGreaterThan(0);
      expect(isolatedPorts.size).toBeGreaterThan(0);
      expect([...normalPorts].filter((port) => isolatedPorts.has(port))).toEqual([]);
    });

    it("keeps one pool's full permits from holding up the other pool", async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const normal = pool({ name: 'normal', maxConcurrency: 2 });
      const isolated = pool({ name: 'isolated', maxConcurrency: 1 });
      track(isolated.request(target.url('/isolated/1'), { signal: signal() }));
      await eventually(() => expect(target.requests).toHaveLength(1));
      const queued = track(isolated.request(target.url('/isolated/2'), { signal: signal() }));

      answers.release('/normal/1');
      const response = await normal.request(target.url('/normal/1'), { signal: signal() });

      expect(response.body.toString('utf8')).toBe('/normal/1');
      expect(queued.state).toBe('pending');
      expect(isolated.snapshot()).toMatchObject({ active: 1, peak: 1 });
      expect(normal.snapshot()).toMatchObject({ active: 0, peak: 1 });
    });
  });

  describe('connection lifetime', () => {
    it('sends on new connections once pooledConnectionLifetimeMs of the clock has passed, and closes the old ones', async () => {
      const target = await upstream();
      const clock = new FakeClock();
      const subject = pool({ pooledConnectionLifetimeMs: 60_000 }, { clock });
      const send = async (times: number) => {
        for (let index = 0; index < times; index++) await subject.request(target.url(), { signal: signal() });
      };
      const portsSince = (from: number) => new Set(target.requests.slice(from).map((request) => request.remotePort));

      await send(3);
      clock.advance(59_999);
      await send(3);
      const before = portsSince(0);
      clock.advance(1);
      await send(3);
      const after = portsSince(6);

      expect([...after].filter((port) => before.has(port))).toEqual([]);
      await eventually(() => expect(target.openSockets).toBe(after.size));
    });

    it('lets a request in flight on an old connection finish there', async () => {
      const answers = heldAnswers();
      const target = await upstream(answers.handler);
      const clock = new FakeClock();
      const subject = pool({ pooledConnectionLifetimeMs: 60_000 }, { clock });
      const slow = subject.request(target.url('/slow'), { signal: signal() });
      await eventually(() => expect(target.requests).toHaveLength(1));

      clock.advance(60_000);
      answers.release('/fresh');
      await subject.request(target.url('/fresh'), { signal: signal() });
      answers.release('/slow');

      expect((await slow).body.toString('utf8')).toBe('/slow');
      const [slowPort, freshPort] = target.requests.map((request) => request.remotePort);
      expect(freshPort).not.toBe(slowPort);
    });
  });

  describe('close', () => {
    it("closes the pool's connections", async () => {
      let upstreamSocket: Socket | undefined;
      const target = await upstream((_request, response) => {
        const socket = response.socket!;
        upstreamSocket = socket;
        // Keep the idle connection open on both sides for minutes, so only the pool's close ends it.
        response.on('finish', () => socket.setTimeout(0));
        response.writeHead(200, { 'keep-alive': 'timeout=600' }).end('ok');
      });
      const subject = pool();
      await subject.request(target.url(), { signal: signal() });
      expect(upstreamSocket?.destroyed).toBe(false);
      const socketClosed = new Promise<void>((resolve) => upstreamSocket!.once('close', () => resolve()));

      await subject.close();
      pools.splice(pools.indexOf(subject), 1);

      await socketClosed;
      expect(target.connections).toBe(1);
    });

    it('refuses requests after close with stopped, without connecting', async () => {
      const target = await upstream();
      const subject = pool();

      await subject.close();
      pools.splice(pools.indexOf(subject), 1);

      await expectKind(subject.request(target.url(), { signal: signal() }), 'stopped');
      expect(target.connections).toBe(0);
    });
  });

  describe('streamed answers (streamAbortable)', () => {
    /** An upstream that sends its headers and a first part at once, and the rest when `rest` resolves. */
    function inTwoParts(rest: Deferred<void>, closed?: Deferred<void>): UpstreamHandler {
      held.push(rest);
      return async (_request, response) => {
        response.on('close', () => closed?.resolve());
        response.writeHead(200, { 'content-type': 'text/event-stream', 'x-upstream': 'models' });
        response.write('data: first\n\n');
        await rest.promise;
        response.end('data: last\n\n');
      };
    }

    async function text(body: AsyncIterable<Buffer>): Promise<string> {
      let read = '';
      for await (const piece of body) read += piece.toString('utf8');
      return read;
    }

    it('hands the answer over at its headers and holds the permit until its body ends', async () => {
      const rest = deferred<void>();
      const target = await upstream(inTwoParts(rest));
      const subject = pool({ maxConcurrency: 2 });

      const response = await subject.streamAbortable(
        target.url('/v1/chat/completions'),
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stream":true}' },
        new LazyAbortController(),
      );

      expect(response.statusCode).toBe(200);
      expect(response.headers['x-upstream']).toBe('models');
      expect(target.requests[0]).toMatchObject({
        method: 'POST',
        path: '/v1/chat/completions',
        body: '{"stream":true}',
      });
      const reading = text(response.body);
      await settle();
      expect(subject.snapshot().active).toBe(1);

      rest.resolve();

      expect(await reading).toBe('data: first\n\ndata: last\n\n');
      await eventually(() => expect(subject.snapshot().active).toBe(0));
    });

    it('frees the permit when the body is destroyed, and the upstream sees the connection go', async () => {
      const closed = deferred<void>();
      const target = await upstream(inTwoParts(deferred<void>(), closed));
      const subject = pool();
      const response = await subject.streamAbortable(target.url(), {}, new LazyAbortController());
      expect(subject.snapshot().active).toBe(1);

      response.body.destroy();

      await closed.promise;
      expect(target.abandoned).toBe(1);
      await eventually(() => expect(subject.snapshot().active).toBe(0));
    });

    it('keeps the next request waiting while a body is open, and lets it go when the body closes', async () => {
      const rest = deferred<void>();
      const target = await upstream(inTwoParts(rest));
      const subject = pool({ maxConcurrency: 1 });
      const first = await subject.streamAbortable(target.url('/first'), {}, new LazyAbortController());

      const second = track(subject.streamAbortable(target.url('/second'), {}, new LazyAbortController()));
      await settle();
      await settle();
      expect(second.state).toBe('pending');
      expect(target.requests.map((request) => request.path)).toEqual(['/first']);

      first.body.destroy();

      await eventually(() => expect(second.state).toBe('fulfilled'));
      expect(target.requests.map((request) => request.path)).toEqual(['/first', '/second']);
      second.value?.body.destroy();
      expect(subject.snapshot().peak).toBe(1);
    });

    it('destroys the body with the reason when the attempt is aborted mid-body, and frees the permit', async () => {
      const closed = deferred<void>();
      const target = await upstream(inTwoParts(deferred<void>(), closed));
      const subject = pool();
      const abort = new LazyAbortController();
      const response = await subject.streamAbortable(target.url(), {}, abort);
      const reading = text(response.body);
      const reason = new Error('the attempt timed out');

      abort.abort(reason);

      await expect(reading).rejects.toBe(reason);
      await closed.promise;
      expect(target.abandoned).toBe(1);
      await eventually(() => expect(subject.snapshot().active).toBe(0));
    });

    it('refuses a request aborted while it waits for a permit; it never reaches the upstream', async () => {
      const target = await upstream(inTwoParts(deferred<void>()));
      const subject = pool({ maxConcurrency: 1 });
      const first = await subject.streamAbortable(target.url('/first'), {}, new LazyAbortController());
      const abort = new LazyAbortController();
      const waiting = subject.streamAbortable(target.url('/abandoned'), {}, abort);
      const reason = new Error('the caller left');

      abort.abort(reason);

      await expect(waiting).rejects.toBe(reason);
      first.body.destroy();
      await eventually(() => expect(subject.snapshot().active).toBe(0));
      expect(target.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it('refuses a request whose attempt was aborted already, without connecting', async () => {
      const target = await upstream();
      const subject = pool();
      const abort = new LazyAbortController();
      const reason = new Error('already gone');
      abort.abort(reason);

      await expect(subject.streamAbortable(target.url(), {}, abort)).rejects.toBe(reason);
      expect(target.connections).toBe(0);
    });

    it('expires a request that waited timeoutMs of the clock for a permit', async () => {
      const target = await upstream(inTwoParts(deferred<void>()));
      const clock = new FakeClock();
      const subject = pool({ maxConcurrency: 1, timeoutMs: 5_000 }, { clock });
      const first = await subject.streamAbortable(target.url('/first'), {}, new LazyAbortController());
      const waiting = track(subject.streamAbortable(target.url('/late'), {}, new LazyAbortController()));

      clock.advance(4_999);
      await settle();
      expect(waiting.state).toBe('pending');
      clock.advance(1);
      await settle();

      expect(waiting.reason).toMatchObject({ kind: 'queue_expired' });
      first.body.destroy();
      expect(target.requests.map((request) => request.path)).toEqual(['/first']);
    });

    it.each([
      ['a host outside allowHosts', (port: number) => `http://localhost:${port}/`, 'egress_denied'],
      ['a scheme other than http(s)', (port: number) => `ftp://127.0.0.1:${port}/`, 'egress_denied'],
      ['a URL that does not parse', () => 'not a url', 'invalid_request'],
    ])('refuses %s before connecting, taking no permit', async (_name, url, kind) => {
      const target = await upstream();
      const subject = pool({}, { rules: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } });

      await expectKind(subject.streamAbortable(url(target.port), {}, new LazyAbortController()), kind);

      expect(target.connections).toBe(0);
      expect(subject.snapshot()).toMatchObject({ active: 0, peak: 0 });
    });

    it('refuses a private address not opened by allowPrivateCidrs, and frees the permit', async () => {
      const target = await upstream();
      const subject = pool({}, { rules: { allowHosts: ['*'], allowPrivateCidrs: [] } });

      await expectKind(subject.streamAbortable(target.url(), {}, new LazyAbortController()), 'egress_denied');

      expect(target.connections).toBe(0);
      expect(subject.snapshot().active).toBe(0);
    });

    it('answers an error status as a response, its body readable', async () => {
      const target = await upstream(json(429, { error: { type: 'rate_limit_error' } }, { 'retry-after': '2' }));
      const subject = pool();

      const response = await subject.streamAbortable(target.url(), {}, new LazyAbortController());

      expect(response.statusCode).toBe(429);
      expect(response.headers['retry-after']).toBe('2');
      expect(JSON.parse(await text(response.body))).toEqual({ error: { type: 'rate_limit_error' } });
      await eventually(() => expect(subject.snapshot().active).toBe(0));
    });

    it('refuses with stopped after close, without connecting', async () => {
      const target = await upstream();
      const subject = pool();
      await subject.close();
      pools.splice(pools.indexOf(subject), 1);

      await expectKind(subject.streamAbortable(target.url(), {}, new LazyAbortController()), 'stopped');
      expect(target.connections).toBe(0);
    });
  });
});

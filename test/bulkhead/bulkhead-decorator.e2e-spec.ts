import { Controller, Get, HttpCode, Module, Param, Post } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import { Bulkhead, CallSignal, RoutePolicyInterceptor } from '../../src/route-policies';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { type Deferred, deferred, track } from '../support/deferred';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { type AbortableRequest, abortableRequest } from '../support/abortable-request';
import { eventOf, getEvents, getLanes } from '../support/service-reads';

/** What the test handlers did: which started, whether their call signal fired; each waits for `release`. */
class HandlerProbe {
  private readonly calls = new Map<string, { gate: Deferred<void>; signal: AbortSignal; sawAbort: boolean }>();
  private open = true;

  async hold(key: string, signal: AbortSignal): Promise<{ key: string }> {
    const call = { gate: deferred(), signal, sawAbort: false };
    this.calls.set(key, call);
    signal.addEventListener('abort', () => (call.sawAbort = true), { once: true });
    if (this.open) await call.gate.promise;
    return { key };
  }

  started(key: string): boolean {
    return this.calls.has(key);
  }

  /** Whether the handler's own abort listener ran. */
  signalFired(key: string): boolean {
    return this.calls.get(key)?.sawAbort ?? false;
  }

  release(key: string): void {
    this.calls.get(key)!.gate.resolve();
  }

  /** Lets every held handler and every later one finish at once. */
  releaseAll(): void {
    this.open = false;
    for (const call of this.calls.values()) call.gate.resolve();
  }
}

let probe = new HandlerProbe();

@Controller('test/double')
@Bulkhead('solo')
class DoubleController {
  @Post(':key')
  @HttpCode(200)
  @Bulkhead('solo')
  run(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }
}

@Controller('test/held')
class HeldController {
  @Post(':key')
  @HttpCode(200)
  @Bulkhead('held')
  hold(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }

  @Post('short/:key')
  @HttpCode(200)
  @Bulkhead('held', { queueTtlMs: 250 })
  short(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }
}

@Controller('test/plain')
class PlainController {
  @Post(':key')
  @HttpCode(200)
  hold(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }
}

/** A base class whose route is decorated, extended by a controller decorated as a whole. */
class DecoratedBase {
  @Post(':key')
  @HttpCode(200)
  @Bulkhead('solo')
  run(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }
}

@Controller('test/inherited')
@Bulkhead('solo')
class InheritingController extends DecoratedBase {}

/** One undecorated route shared by two controllers in different lanes. */
class SharedBase {
  @Post(':key')
  @HttpCode(200)
  run(@Param('key') key: string, @CallSignal() signal: AbortSignal) {
    return probe.hold(key, signal);
  }
}

@Controller('test/shared-a')
@Bulkhead('general')
class SharedAController extends SharedBase {}

@Controller('test/shared-b')
@Bulkhead('render')
class SharedBController extends SharedBase {}

@Module({
  controllers: [
    DoubleController,
    HeldController,
    PlainController,
    InheritingController,
    SharedAController,
    SharedBController,
  ],
})
class TestRoutesModule {}

@Controller('test/missing')
class MissingLaneController {
  @Get()
  @Bulkhead('missing')
  handle() {
    return { ok: true };
  }
}

@Module({ controllers: [MissingLaneController] })
class MissingLaneModule {}

@Controller('test/bad-ttl')
class BadTtlController {
  @Get()
  @Bulkhead('solo', { queueTtlMs: 0 })
  handle() {
    return { ok: true };
  }
}

@Module({ controllers: [BadTtlController] })
class BadTtlModule {}

const CONFIG = {
  examples: true,
  lanes: {
    render: { concurrency: 2, queueCapacity: 2 },
    general: { concurrency: 4, queueCapacity: 4 },
    solo: { concurrency: 1, queueCapacity: 0 },
    held: { concurrency: 1, queueCapacity: 2, queueTtlMs: 5000 },
  },
};

/** What a generated call id looks like: what an X-Call-Id may be. */
const CALL_ID = /^[A-Za-z0-9_-]{1,48}$/;

/** Requests whose client can go away; their connection pools are closed after each test. */
const requests: AbortableRequest[] = [];

/** A POST whose client can go away, tracked for clean-up. */
function abortablePost(url: string, callId: string): AbortableRequest {
  const request = abortableRequest('POST', url, { json: { note: callId }, headers: { 'x-call-id': callId } });
  requests.push(request);
  return request;
}

describe.each(PLATFORMS)('@Bulkhead and @CallSignal on controllers, on %s', (platform) => {
  let clock: FakeClock;
  let service: TestApp | undefined;
  let url: string;

  beforeEach(async () => {
    probe = new HandlerProbe();
    clock = new FakeClock();
    service = await createTestApp(CONFIG, { clock, imports: [TestRoutesModule], platform });
    url = service.url;
  });

  afterEach(async () => {
    probe.releaseAll();
    await Promise.all(requests.splice(0).map((request) => request.dispose()));
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  it('runs a method in its own lane when it overrides the lane of its class', async () => {
    const rendering = send('POST', `${url}/v1/examples/reports/render`, {
      json: { ms: 1000 },
      headers: { 'x-call-id': 'render-1' },
    });
    await eventually(async () => expect((await getLanes(url)).render.active).toBe(1));
    expect((await getLanes(url)).general).toMatchObject({ active: 0, peakActive: 0 });

    const summary = await send('GET', `${url}/v1/examples/reports/summary`, { headers: { 'x-call-id': 'summary-1' } });
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({ reports: 0 });
    const lanes = await getLanes(url);
    expect(lanes.general).toMatchObject({ active: 0, waiting: 0, peakActive: 1 });
    expect(lanes.render).toMatchObject({ active: 1, waiting: 0, peakActive: 1 });

    await eventually(() => expect(clock.pendingTimers).toBe(1));
    clock.advance(1000);
    const rendered = await rendering;
    expect(rendered.status).toBe(200);
    expect(rendered.body).toEqual({ rendered: true, tookMs: 1000 });
    expect((await getLanes(url)).render).toMatchObject({ active: 0, peakActive: 1 });
    expect((await getEvents(url)).map(({ callId, toolId, lane, status }) => [callId, toolId, lane, status])).toEqual([
      ['summary-1', 'ReportsController.summary', 'general', 'ok'],
      ['render-1', 'ReportsController.render', 'render', 'ok'],
    ]);
  });

  it('takes one slot for a route decorated with the same lane on its class and its method', async () => {
    // Lane solo has one slot and no queue: a second pass through the interceptor would refuse itself.
    const call = send('POST', `${url}/test/double/once`, { headers: { 'x-call-id': 'once' } });
    await eventually(() => expect(probe.started('once')).toBe(true));
    expect((await getLanes(url)).solo).toMatchObject({ active: 1, waiting: 0, peakActive: 1 });
    probe.release('once');

    const answer = await call;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ key: 'once' });
    expect((await eventOf(url, 'once'))?.status).toBe('ok');
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, DoubleController.prototype.run) ?? []).not.toContain(
      RoutePolicyInterceptor,
    );
    expect(Reflect.getMetadata(INTERCEPTORS_METADATA, DoubleController)).toEqual([RoutePolicyInterceptor]);
  });

  it('takes one slot for an inherited decorated method of a controller decorated as a whole', async () => {
    const call = send('POST', `${url}/test/inherited/child`, { headers: { 'x-call-id': 'child' } });
    await eventually(() => expect(probe.started('child')).toBe(true));
    expect((await getLanes(url)).solo).toMatchObject({ active: 1, peakActive: 1 });
    probe.release('child');

    expect((await call).status).toBe(200);
  });

  it('runs a method shared by two controllers in the lane of each controller', async () => {
    probe.releaseAll();
    const a = await send('POST', `${url}/test/shared-a/one`, { headers: { 'x-call-id': 'shared-a' } });
    const b = await send('POST', `${url}/test/shared-b/two`, { headers: { 'x-call-id': 'shared-b' } });

    expect([a.status, b.status]).toEqual([200, 200]);
    const lanes = await getLanes(url);
    expect(lanes.general.peakActive).toBe(1);
    expect(lanes.render.peakActive).toBe(1);
    expect((await eventOf(url, 'shared-a'))?.toolId).toBe('SharedAController.run');
    expect((await eventOf(url, 'shared-b'))?.toolId).toBe('SharedBController.run');
  });

  it('refuses a request to a full lane with 503 queue_full, Retry-After and the error envelope', async () => {
    const first = send('POST', `${url}/test/double/first`, { headers: { 'x-call-id': 'first' } });
    await eventually(() => expect(probe.started('first')).toBe(true));

    const refused = await send('POST', `${url}/test/double/second`, { headers: { 'x-call-id': 'second' } });
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.headers['x-call-id']).toBe('second');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.body).toMatchObject({
      error: {
        kind: 'queue_full',
        message: "lane 'solo' is full: 1 running, 0 waiting",
        attempts: 0,
        jsonrpcCode: -32006,
        retryAfterMs: 1000,
      },
      callId: 'second',
    });
    expect(Object.keys(refused.body.error).sort()).toEqual([
      'attempts',
      'jsonrpcCode',
      'kind',
      'message',
      'retryAfterMs',
    ]);
    expect(probe.started('second')).toBe(false);
    expect(await eventOf(url, 'second')).toMatchObject({
      toolId: 'DoubleController.run',
      lane: 'solo',
      status: 'queue_full',
    });

    probe.release('first');
    expect((await first).status).toBe(200);
  });

  it('removes a waiting request from the queue at once when its client disconnects', async () => {
    const running = track(send('POST', `${url}/test/held/running`, { headers: { 'x-call-id': 'running' } }));
    await eventually(() => expect(probe.started('running')).toBe(true));
    const waiter = abortablePost(`${url}/test/held/waiter`, 'waiter');
    await eventually(async () => expect((await getLanes(url)).held).toMatchObject({ active: 1, waiting: 1 }));

    await waiter.abort();
    expect((await waiter.settled).error).toBeDefined();
    await eventually(async () => expect((await getLanes(url)).held).toMatchObject({ active: 1, waiting: 0 }));
    expect(running.state).toBe('pending');
    await eventually(async () =>
      expect(await eventOf(url, 'waiter')).toMatchObject({
        toolId: 'HeldController.hold',
        lane: 'held',
        status: 'cancelled',
      }),
    );

    probe.release('running');
    await eventually(() => expect(running.state).toBe('fulfilled'));
    expect(running.value?.status).toBe(200);
    expect(probe.started('waiter')).toBe(false);
    expect((await getLanes(url)).held).toMatchObject({ active: 0, waiting: 0, peakActive: 1 });
  });

  it("fires a running handler's call signal when its client disconnects and holds the slot until it settles", async () => {
    const runner = abortablePost(`${url}/test/held/runner`, 'runner');
    await eventually(() => expect(probe.started('runner')).toBe(true));
    // The POST body has been read; that alone must not look like the client leaving.
    expect((await getLanes(url)).held.active).toBe(1);
    expect(probe.signalFired('runner')).toBe(false);

    await runner.abort();
    expect((await runner.settled).error).toBeDefined();
    await eventually(() => expect(probe.signalFired('runner')).toBe(true));

    const next = send('POST', `${url}/test/held/next`, { headers: { 'x-call-id': 'next' } });
    await eventually(async () => expect((await getLanes(url)).held).toMatchObject({ active: 1, waiting: 1 }));
    expect(probe.started('next')).toBe(false);
    expect(await eventOf(url, 'runner')).toBeUndefined();

    probe.release('runner');
    await eventually(async () =>
      expect(await eventOf(url, 'runner')).toMatchObject({
        toolId: 'HeldController.hold',
        lane: 'held',
        status: 'finished_after_caller_cancel',
      }),
    );
    await eventually(() => expect(probe.started('next')).toBe(true));
    probe.release('next');
    expect((await next).status).toBe(200);
    expect(probe.signalFired('next')).toBe(false);
  });

  it("expires a waiting request at its route's queueTtlMs, or at the lane's when the route sets none", async () => {
    const running = send('POST', `${url}/test/held/running`, { headers: { 'x-call-id': 'running' } });
    await eventually(() => expect(probe.started('running')).toBe(true));
    const short = send('POST', `${url}/test/held/short/short`, { headers: { 'x-call-id': 'short' } });
    await eventually(async () => expect((await getLanes(url)).held.waiting).toBe(1));
    const long = send('POST', `${url}/test/held/long`, { headers: { 'x-call-id': 'long' } });
    await eventually(async () => expect((await getLanes(url)).held.waiting).toBe(2));

    clock.advance(249);
    expect((await getLanes(url)).held.waiting).toBe(2);
    clock.advance(1);
    const expired = await short;
    expect(expired.status).toBe(503);
    expect(expired.body).toMatchObject({
      error: {
        kind: 'queue_expired',
        message: "waited 250 ms in lane 'held' without a free slot",
        attempts: 0,
        jsonrpcCode: -32007,
      },
      callId: 'short',
    });
    expect((await getLanes(url)).held).toMatchObject({ active: 1, waiting: 1 });

    clock.advance(5000 - 250 - 1);
    expect((await getLanes(url)).held.waiting).toBe(1);
    clock.advance(1);
    const expiredLong = await long;
    expect(expiredLong.status).toBe(503);
    expect(expiredLong.body.error).toMatchObject({ kind: 'queue_expired', jsonrpcCode: -32007 });
    expect((await getLanes(url)).held).toMatchObject({ active: 1, waiting: 0 });
    expect(probe.started('short')).toBe(false);
    expect(probe.started('long')).toBe(false);
    expect((await eventOf(url, 'short'))?.status).toBe('queue_expired');

    probe.release('running');
    expect((await running).status).toBe(200);
  });

  it('echoes the X-Call-Id of a decorated route and generates one when there is none', async () => {
    const given = await send('GET', `${url}/v1/examples/reports/summary`, { headers: { 'x-call-id': 'My_call-42' } });
    expect(given.status).toBe(200);
    expect(given.headers['x-call-id']).toBe('My_call-42');

    const generated = await send('GET', `${url}/v1/examples/reports/summary`);
    expect(generated.headers['x-call-id']).toMatch(CALL_ID);
    expect(generated.headers['x-call-id']).not.toBe('My_call-42');
    const events = await getEvents(url);
    expect(events.map((event) => event.callId)).toEqual(['My_call-42', generated.headers['x-call-id']]);
  });

  it.each([
    ['a space', 'bad id'],
    ['a character outside [A-Za-z0-9_-]', 'call.1'],
    ['49 characters', 'x'.repeat(49)],
  ])('refuses an X-Call-Id with %s and never echoes it', async (_what, callId) => {
    const refused = await send('POST', `${url}/test/held/refused`, { headers: { 'x-call-id': callId } });
    expect(refused.status).toBe(400);
    expect(refused.headers['x-call-id']).toBeUndefined();
    expect(refused.body).toEqual({
      error: {
        kind: 'invalid_request',
        message: expect.stringContaining('X-Call-Id'),
        attempts: 0,
        jsonrpcCode: -32600,
      },
    });
    expect(JSON.stringify(refused.body)).not.toContain(callId);
    expect(probe.started('refused')).toBe(false);
    expect((await getLanes(url)).held.peakActive).toBe(0);
  });

  it('fires @CallSignal on a route without @Bulkhead when its client disconnects', async () => {
    const plain = abortablePost(`${url}/test/plain/plain`, 'plain');
    await eventually(() => expect(probe.started('plain')).toBe(true));
    expect((await getLanes(url)).held.active).toBe(0);
    expect(probe.signalFired('plain')).toBe(false);

    await plain.abort();
    expect((await plain.settled).error).toBeDefined();
    await eventually(() => expect(probe.signalFired('plain')).toBe(true));
  });

  it('leaves @CallSignal unfired when the response of a route without @Bulkhead completes', async () => {
    const call = send('POST', `${url}/test/plain/done`, { json: { a: 1 } });
    await eventually(() => expect(probe.started('done')).toBe(true));
    probe.release('done');
    const answer = await call;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ key: 'done' });
    expect(probe.signalFired('done')).toBe(false);
  });
});

describe('@Bulkhead naming a lane the config does not have', () => {
  it('makes the app refuse to start, naming the controller, the method and the lane', async () => {
    await expect(createTestApp(CONFIG, { imports: [MissingLaneModule] })).rejects.toThrow(
      /@Bulkhead\('missing'\) on MissingLaneController\.handle: the config has no lane 'missing'/,
    );
  });
});

describe('@Bulkhead with an invalid queueTtlMs', () => {
  it('makes the app refuse to start, naming the route', async () => {
    await expect(createTestApp(CONFIG, { imports: [BadTtlModule] })).rejects.toThrow(
      "@Bulkhead('solo') on BadTtlController.handle: queueTtlMs must be a positive number of milliseconds",
    );
  });
});

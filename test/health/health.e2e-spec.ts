import { FakeClock } from '../../src/common/fake-clock';
import { Lifecycle } from '../../src/lifecycle';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { track } from '../support/deferred';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { sendOnNewConnection } from '../support/new-connection';
import { getLanes } from '../support/service-reads';

const DRAIN_MS = 5000;

const CONFIG = {
  server: { shutdownDrainMs: DRAIN_MS },
  lanes: { work: { concurrency: 1, queueCapacity: 1 } },
  tools: { wait: { lane: 'work', kind: 'builtin', builtin: 'delay', timeoutMs: 60_000 } },
};

describe.each(PLATFORMS)('health and shutdown, on %s', (platform) => {
  let clock: FakeClock;
  let service: TestApp | undefined;
  let url: string;

  beforeEach(async () => {
    clock = new FakeClock();
    service = await createTestApp(CONFIG, { clock, platform });
    url = service.url;
  });

  afterEach(async () => {
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  /** Starts a `wait` call and resolves once it runs and its delay timer is set. */
  const holdCall = async (callId: string, ms: number) => {
    const call = track(invoke(url, 'wait', { ms }, { 'x-call-id': callId }));
    await eventually(async () => expect((await getLanes(url)).work.active).toBe(1));
    return call;
  };

  it.each(['live', 'ready'])('answers /health/%s with 200 and status ok', async (probe) => {
    const response = await send('GET', `${url}/health/${probe}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'ok' });
  });

  it('turns readiness to 503 once shutdown starts, refuses new calls and lets accepted ones finish', async () => {
    const held = await holdCall('held', 1000);
    const queued = track(invoke(url, 'wait', { ms: 1000 }, { 'x-call-id': 'queued' }));
    await eventually(async () => expect((await getLanes(url)).work.waiting).toBe(1));

    const drained = track(service!.app.get(Lifecycle).drain());

    const ready = await sendOnNewConnection('GET', `${url}/health/ready`);
    expect(ready.status).toBe(503);
    expect(ready.headers.connection).toBe('close');
    expect(ready.body).toEqual({
      error: { kind: 'unavailable', message: expect.stringMatching(/shutting down/), attempts: 0, jsonrpcCode: -32012 },
    });

    const live = await sendOnNewConnection('GET', `${url}/health/live`);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ status: 'ok' });
    expect(live.headers.connection).toBe('close');

    const refused = await sendOnNewConnection('POST', `${url}/v1/tools/wait/invoke`, {
      json: { arguments: { ms: 1 } },
      headers: { 'x-call-id': 'late' },
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.connection).toBe('close');
    expect(refused.body).toMatchObject({
      error: { kind: 'stopped', message: "lane 'work' is shutting down", attempts: 0, jsonrpcCode: -32009 },
      callId: 'late',
      toolId: 'wait',
    });

    expect(held.state).toBe('pending');
    expect(drained.state).toBe('pending');
    // The held call's delay and attempt timers, the queued call's TTL, and the drain deadline.
    await eventually(() => expect(clock.pendingTimers).toBe(4));
    clock.advance(1000);
    await eventually(() => expect(held.state).toBe('fulfilled'));
    expect(held.value).toMatchObject({ status: 200, body: { callId: 'held', result: { waitedMs: 1000 } } });
    expect(held.value!.headers.connection).toBe('close');

    await eventually(() => expect(clock.pendingTimers).toBe(3));
    clock.advance(1000);
    await eventually(() => expect(queued.state).toBe('fulfilled'));
    expect(queued.value).toMatchObject({ status: 200, body: { callId: 'queued', result: { waitedMs: 1000 } } });
    await eventually(() => expect(drained.state).toBe('fulfilled'));
  });

  it('answers a call still running when the drain time is over with 503 stopped', async () => {
    const held = await holdCall('held', 20_000);
    await eventually(() => expect(clock.pendingTimers).toBe(2));
    const drained = track(service!.app.get(Lifecycle).drain());

    clock.advance(DRAIN_MS - 1);
    expect((await sendOnNewConnection('GET', `${url}/v1/lanes`)).body.lanes.work.active).toBe(1);
    expect(held.state).toBe('pending');
    expect(drained.state).toBe('pending');

    clock.advance(1);
    await eventually(() => expect(held.state).toBe('fulfilled'));
    expect(held.value!.status).toBe(503);
    expect(held.value!.headers.connection).toBe('close');
    expect(held.value!.body).toMatchObject({
      error: {
        kind: 'stopped',
        message: 'the service shut down before the call finished',
        attempts: 1,
        jsonrpcCode: -32009,
      },
      callId: 'held',
      toolId: 'wait',
    });
    await eventually(() => expect(drained.state).toBe('fulfilled'));
    expect((await sendOnNewConnection('GET', `${url}/v1/lanes`)).body.lanes.work).toMatchObject({
      active: 0,
      waiting: 0,
    });
  });
});

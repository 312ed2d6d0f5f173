import { FakeClock } from '../../src/common/fake-clock';
import { type AbortableRequest, abortableRequest } from '../support/abortable-request';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, type PromText, samplesOf, sampleValue } from '../support/prom-text';
import { getLanes } from '../support/service-reads';

const CONFIG = {
  lanes: {
    work: { concurrency: 1, queueCapacity: 1 },
    quick: { concurrency: 2, queueCapacity: 0 },
  },
  tools: {
    wait: { lane: 'work', kind: 'builtin', builtin: 'delay' },
    read: { lane: 'quick', kind: 'builtin', builtin: 'echo' },
  },
};

describe.each(PLATFORMS)('GET /metrics, on %s', (platform) => {
  let clock: FakeClock;
  let service: TestApp | undefined;
  let url: string;
  const requests: AbortableRequest[] = [];

  const scrape = async (): Promise<PromText> => {
    const response = await send('GET', `${url}/metrics`);
    expect(response.status).toBe(200);
    return parsePromText(response.body as string);
  };

  /** Waits until the delay tools that run have set their timers, then moves the clock on. */
  const advanceWhenTimers = async (count: number, ms: number) => {
    await eventually(() => expect(clock.pendingTimers).toBe(count));
    clock.advance(ms);
  };

  beforeEach(async () => {
    clock = new FakeClock();
    service = await createTestApp(CONFIG, { clock, platform });
    url = service.url;
  });

  afterEach(async () => {
    await Promise.all(requests.splice(0).map((request) => request.dispose()));
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  it('answers Prometheus text exposition with its content type and the default process metrics', async () => {
    const response = await send('GET', `${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4(;|$)/);
    const prom = parsePromText(response.body as string);
    expect(prom.types.get('process_cpu_user_seconds_total')).toBe('counter');
    expect(sampleValue(prom, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(prom.types.get('nodejs_heap_size_used_bytes')).toBe('gauge');
    expect(sampleValue(prom, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(prom.types.get('bulkhead_lane_active')).toBe('gauge');
    expect(prom.types.get('bulkhead_admissions_total')).toBe('counter');
    expect(prom.types.get('bulkhead_queue_wait_seconds')).toBe('histogram');
    expect(prom.types.get('bulkhead_calls_total')).toBe('counter');
    expect(prom.types.get('bulkhead_call_duration_seconds')).toBe('histogram');
  });

  it('shows lane gauges, capacities, admissions, queue waits and calls with their counts', async () => {
    const first = invoke(url, 'wait', { ms: 1000 }, { 'x-call-id': 'first' });
    await eventually(async () => expect((await getLanes(url)).work.active).toBe(1));
    const second = invoke(url, 'wait', { ms: 1000 }, { 'x-call-id': 'second' });
    await eventually(async () => expect((await getLanes(url)).work.waiting).toBe(1));
    expect((await invoke(url, 'wait', { ms: 1000 }, { 'x-call-id': 'third' })).status).toBe(503);

    let prom = await scrape();
    expect(sampleValue(prom, 'bulkhead_lane_active', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_waiting', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_peak_active', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_active', { lane: 'quick' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_lane_capacity', { lane: 'work', kind: 'concurrency' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_capacity', { lane: 'work', kind: 'queue' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_lane_capacity', { lane: 'quick', kind: 'concurrency' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_lane_capacity', { lane: 'quick', kind: 'queue' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_admissions_total', { lane: 'work', result: 'accepted' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_admissions_total', { lane: 'work', result: 'queue_full' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_admissions_total', { lane: 'quick', result: 'accepted' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_count', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'wait', outcome: 'queue_full', transport: 'http' })).toBe(
      1,
    );
    expect(
      sampleValue(prom, 'bulkhead_calls_total', { tool: 'wait', outcome: 'ok', transport: 'http' }),
    ).toBeUndefined();

    // At 1000 ms the first call ends and the second starts, having waited 1 s; it ends at 2000 ms.
    await advanceWhenTimers(3, 1000);
    expect((await first).status).toBe(200);
    await advanceWhenTimers(2, 1000);
    expect((await second).status).toBe(200);

    prom = await scrape();
    expect(sampleValue(prom, 'bulkhead_lane_active', { lane: 'work' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_lane_waiting', { lane: 'work' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_lane_peak_active', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_admissions_total', { lane: 'work', result: 'accepted' })).toBe(2);
    // Every accepted call that started is observed once, with its wait.
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_count', { lane: 'work' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_sum', { lane: 'work' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_bucket', { lane: 'work', le: '0.001' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_bucket', { lane: 'work', le: '0.5' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_bucket', { lane: 'work', le: '1' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_bucket', { lane: 'work', le: '+Inf' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'wait', outcome: 'ok', transport: 'http' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'wait', outcome: 'queue_full', transport: 'http' })).toBe(
      1,
    );
    expect(sampleValue(prom, 'bulkhead_call_duration_seconds_count', { tool: 'wait', outcome: 'ok' })).toBe(2);
    // From arrival to answer: 1 s for the first, 2 s for the second.
    expect(sampleValue(prom, 'bulkhead_call_duration_seconds_sum', { tool: 'wait', outcome: 'ok' })).toBe(3);
    expect(sampleValue(prom, 'bulkhead_call_duration_seconds_bucket', { tool: 'wait', outcome: 'ok', le: '1' })).toBe(
      1,
    );
    expect(sampleValue(prom, 'bulkhead_call_duration_seconds_bucket', { tool: 'wait', outcome: 'ok', le: '2.5' })).toBe(
      2,
    );
  });

  it('counts a caller that leaves while waiting as queued and one that leaves while running as running', async () => {
    const running = abortableRequest('POST', `${url}/v1/tools/wait/invoke`, { json: { arguments: { ms: 60_000 } } });
    requests.push(running);
    await eventually(async () => expect((await getLanes(url)).work.active).toBe(1));
    const waiting = abortableRequest('POST', `${url}/v1/tools/wait/invoke`, { json: { arguments: { ms: 1 } } });
    requests.push(waiting);
    await eventually(async () => expect((await getLanes(url)).work.waiting).toBe(1));

    await waiting.abort();
    await eventually(async () => expect((await getLanes(url)).work.waiting).toBe(0));
    let prom = await scrape();
    expect(sampleValue(prom, 'bulkhead_cancellations_total', { lane: 'work', stage: 'queued' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_cancellations_total', { lane: 'work', stage: 'running' })).toBe(0);

    // The delay tool stops on its signal, so the running call ends as soon as its client leaves.
    await running.abort();
    await eventually(async () => expect((await getLanes(url)).work.active).toBe(0));
    prom = await scrape();
    expect(sampleValue(prom, 'bulkhead_cancellations_total', { lane: 'work', stage: 'queued' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_cancellations_total', { lane: 'work', stage: 'running' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_cancellations_total', { lane: 'quick', stage: 'running' })).toBe(0);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'wait', outcome: 'cancelled', transport: 'http' })).toBe(
      1,
    );
    expect(
      sampleValue(prom, 'bulkhead_calls_total', {
        tool: 'wait',
        outcome: 'finished_after_caller_cancel',
        transport: 'http',
      }),
    ).toBe(1);
    expect(sampleValue(prom, 'bulkhead_queue_wait_seconds_count', { lane: 'work' })).toBe(1);
  });

  it('labels samples only with configured lane and tool names', async () => {
    expect((await invoke(url, 'read', { q: 1 })).status).toBe(200);
    expect((await invoke(url, 'wait', { ms: 'x' })).status).toBe(400);
    expect((await invoke(url, 'evil_tool_xyz', { q: 1 })).status).toBe(404);
    expect((await invoke(url, 'Evil%20Tool%22xyz', { q: 1 })).status).toBe(404);

    const response = await send('GET', `${url}/metrics`);
    expect(response.body).not.toMatch(/evil/i);
    const prom = parsePromText(response.body as string);
    const lanes = new Set(prom.samples.flatMap((sample) => (sample.labels.lane ? [sample.labels.lane] : [])));
    const tools = new Set(prom.samples.flatMap((sample) => (sample.labels.tool ? [sample.labels.tool] : [])));
    expect([...lanes].sort()).toEqual(['quick', 'work']);
    expect([...tools].sort()).toEqual(['read', 'wait']);
    expect(samplesOf(prom, 'bulkhead_calls_total').map((sample) => sample.labels)).toEqual(
      expect.arrayContaining([
        { tool: 'read', outcome: 'ok', transport: 'http' },
        { tool: 'wait', outcome: 'schema', transport: 'http' },
      ]),
    );
  });
});

import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../src/common/fake-clock';
import { createTestApp, type TestApp } from '../support/create-app';
import { deferred } from '../support/deferred';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { Upstream } from '../support/upstream';

/**
 * The story of seed 000 over HTTP: a renderer that hangs fills its own lane and nothing else.
 * One render runs, two wait, the fourth is refused at once, notes are served meanwhile, a
 * waiting render expires at its deadline, and the rest finish.
 */
describe('seed-000 over HTTP', () => {
  let upstream: Upstream;
  let service: TestApp;
  const clock = new FakeClock();
  const release = deferred();

  beforeAll(async () => {
    upstream = await Upstream.start(async (request, response: ServerResponse) => {
      await release.promise;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ preview: request.body }));
    });
    service = await createTestApp(
      {
        lanes: {
          render: { concurrency: 1, queueCapacity: 2 },
          notes: { concurrency: 1, queueCapacity: 1 },
        },
        tools: {
          render_preview: { lane: 'render', kind: 'http', url: upstream.url('/render'), timeoutMs: 60_000 },
          read_notes: { lane: 'notes', kind: 'builtin', builtin: 'echo' },
        },
      },
      { clock },
    );
  });

  afterAll(async () => {
    release.resolve();
    await service.close();
    await upstream.close();
  });

  it('keeps a hung renderer in its own lane, refuses the overflow at once and expires a waiting call', async () => {
    const lanes = async () => (await send('GET', `${service.url}/v1/lanes`)).body.lanes;

    const first = invoke(service.url, 'render_preview', { page: 1 }, { 'x-call-id': 'render-1' });
    await eventually(() => expect(upstream.requests).toHaveLength(1));
    const expiring = invoke(
      service.url,
      'render_preview',
      { page: 2 },
      { 'x-call-id': 'render-2', 'x-queue-ttl-ms': '1000' },
    );
    const third = invoke(service.url, 'render_preview', { page: 3 }, { 'x-call-id': 'render-3' });
    await eventually(async () => expect((await lanes()).render.waiting).toBe(2));

    const fourth = await invoke(service.url, 'render_preview', { page: 4 }, { 'x-call-id': 'render-4' });
    expect(fourth.status).toBe(503);
    expect(fourth.headers['retry-after']).toBe('1');
    expect(fourth.body).toEqual({
      error: {
        kind: 'queue_full',
        message: "lane 'render' is full: 1 running, 2 waiting",
        attempts: 0,
        jsonrpcCode: -32006,
        retryAfterMs: 1000,
        type: 'queue_full',
        code: 'queue_full',
        param: null,
      },
      callId: 'render-4',
      toolId: 'render_preview',
    });

    const notes = await invoke(service.url, 'read_notes', { q: 'today' }, { 'x-call-id': 'notes-1' });
    expect(notes.status).toBe(200);
    expect(notes.body).toMatchObject({ toolId: 'read_notes', lane: 'notes', result: { q: 'today' } });
    expect((await lanes()).render).toEqual({
      active: 1,
      waiting: 2,
      waitingByClass: { critical: 0, standard: 2, sheddable: 0 },
      concurrency: 1,
      queueCapacity: 2,
      peakActive: 1,
    });

    clock.advance(1000);
    const expired = await expiring;
    expect(expired.status).toBe(503);
    expect(expired.body.error).toMatchObject({ kind: 'queue_expired', jsonrpcCode: -32007, attempts: 0 });
    expect((await lanes()).render).toMatchObject({ active: 1, waiting: 1 });

    release.resolve();
    const [firstDone, thirdDone] = await Promise.all([first, third]);
    expect([firstDone.status, thirdDone.status]).toEqual([200, 200]);
    expect(firstDone.body).toMatchObject({ callId: 'render-1', lane: 'render', attempts: 1, replayed: false });
    expect(upstream.requests.map((request) => request.headers['x-call-id'])).toEqual(['render-1', 'render-3']);
    expect(upstream.peakInFlight).toBe(1);

    const events = (await send('GET', `${service.url}/v1/events`)).body.events as Array<{
      callId: string;
      status: string;
    }>;
    expect(events.map(({ callId, status }) => [callId, status])).toEqual([
      ['render-4', 'queue_full'],
      ['notes-1', 'ok'],
      ['render-2', 'queue_expired'],
      ['render-1', 'ok'],
      ['render-3', 'ok'],
    ]);
  });
});

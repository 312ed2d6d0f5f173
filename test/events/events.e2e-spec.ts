import { Agent } from 'undici';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { send } from '../support/http-client';
import { getEvents, inParallel } from '../support/service-reads';

const CONFIG = {
  lanes: {
    main: { concurrency: 64, queueCapacity: 1000 },
    side: { concurrency: 1, queueCapacity: 0 },
  },
  tools: {
    echo_tool: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    wait: { lane: 'side', kind: 'builtin', builtin: 'delay' },
  },
};

const SECRET = 'sk-live-9f8e7d6c5b4a-DO-NOT-LOG';

describe.each(PLATFORMS)('GET /v1/events, on %s', (platform) => {
  let clock: FakeClock;
  let service: TestApp | undefined;
  let url: string;
  /** Keep-alive sockets of our own, closed before the app. */
  let agent: Agent;

  const call = (toolId: string, args: unknown, callId: string) =>
    send('POST', `${url}/v1/tools/${toolId}/invoke`, {
      json: { arguments: args },
      headers: { 'x-call-id': callId },
      dispatcher: agent,
    });

  /** `count` echo calls named `${prefix}-0` ... in order, each answered before the next starts. */
  const callsInOrder = async (prefix: string, count: number) => {
    for (let n = 0; n < count; n++) expect((await call('echo_tool', { n }, `${prefix}-${n}`)).status).toBe(200);
  };

  beforeEach(async () => {
    clock = new FakeClock(Date.UTC(2026, 2, 14, 9, 26, 53));
    service = await createTestApp(CONFIG, { clock, platform });
    url = service.url;
    agent = new Agent({ connections: 32 });
  });

  afterEach(async () => {
    await agent.close();
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  it('records each call with exactly at, callId, toolId, lane, tenant and status, newest last', async () => {
    clock.advance(1500);
    expect((await call('echo_tool', { q: 1 }, 'first')).status).toBe(200);
    clock.advance(250);
    expect((await call('wait', { ms: 'soon' }, 'second')).status).toBe(400);

    const response = await send('GET', `${url}/v1/events`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      events: [
        {
          at: '2026-03-14T09:26:54.500Z',
          callId: 'first',
          toolId: 'echo_tool',
          lane: 'main',
          tenant: 'anonymous',
          status: 'ok',
        },
        {
          at: '2026-03-14T09:26:54.750Z',
          callId: 'second',
          toolId: 'wait',
          lane: 'side',
          tenant: 'anonymous',
          status: 'schema',
        },
      ],
    });
  });

  it('returns the newest n events, newest last, for limit=n', async () => {
    await callsInOrder('call', 5);
    const events = await getEvents(url, 2);
    expect(events.map((event) => event.callId)).toEqual(['call-3', 'call-4']);
    expect((await getEvents(url, 1)).map((event) => event.callId)).toEqual(['call-4']);
    expect((await getEvents(url, 50)).map((event) => event.callId)).toEqual([
      'call-0',
      'call-1',
      'call-2',
      'call-3',
      'call-4',
    ]);
  });

  it('returns the newest 100 events when no limit is given', async () => {
    await callsInOrder('call', 105);
    const events = await getEvents(url);
    expect(events).toHaveLength(100);
    expect(events[0].callId).toBe('call-5');
    expect(events[99].callId).toBe('call-104');
  });

  it.each(['0', '-1', 'abc', '1.5', '1e2', '1001', '', ' 5', '0x10'])(
    'refuses limit=%p with 400 invalid_request',
    async (limit) => {
      const response = await send('GET', `${url}/v1/events?limit=${encodeURIComponent(limit)}`);
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: {
          kind: 'invalid_request',
          message: 'limit must be an integer from 1 to 1000',
          attempts: 0,
          jsonrpcCode: -32600,
          type: 'invalid_request',
          code: 'invalid_request',
          param: null,
        },
      });
    },
  );

  it('accepts limit=1000, the ledger capacity', async () => {
    await callsInOrder('call', 3);
    const response = await send('GET', `${url}/v1/events?limit=1000`);
    expect(response.status).toBe(200);
    expect(response.body.events).toHaveLength(3);
  });

  it('never shows tool arguments or results', async () => {
    const echoed = await call('echo_tool', { apiKey: SECRET, nested: { token: SECRET } }, 'with-secret');
    expect(echoed.status).toBe(200);
    // The secret did go through the call: the echo tool answered it back.
    expect(JSON.stringify(echoed.body)).toContain(SECRET);
    const refused = await call('wait', { ms: SECRET }, 'refused-secret');
    expect(refused.status).toBe(400);

    const response = await send('GET', `${url}/v1/events`);
    expect(response.body.events.map((event: { callId: string }) => event.callId)).toEqual([
      'with-secret',
      'refused-secret',
    ]);
    const text = JSON.stringify(response.body);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('apiKey');
    expect(text).not.toContain('token');
    for (const event of response.body.events) {
      expect(Object.keys(event).sort()).toEqual(['at', 'callId', 'lane', 'status', 'tenant', 'toolId']);
    }
  });

  it('holds only the newest 1000 events after 1005 calls', async () => {
    await callsInOrder('old', 5);
    await inParallel(1000, 32, async (n) => {
      const answer = await call('echo_tool', { n }, `new-${n}`);
      if (answer.status !== 200) throw new Error(`call new-${n} answered ${answer.status}`);
    });

    const events = await getEvents(url, 1000);
    expect(events).toHaveLength(1000);
    const ids = new Set(events.map((event) => event.callId));
    expect(ids.size).toBe(1000);
    for (let n = 0; n < 1000; n++) expect(ids.has(`new-${n}`)).toBe(true);
    expect((await send('GET', `${url}/v1/events?limit=1001`)).status).toBe(400);
  });
});

import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallRoutingTransport, type RoutedCall } from './call-routing.transport';
import type { UpstreamCall } from './upstream-call';

const CALL: UpstreamCall = {
  callId: 'c-1',
  signal: new AbortController().signal,
  timeoutMs: 1_000,
  maxResponseBytes: 1_000,
  stream: () => Promise.reject(new Error('not used')),
};

describe('CallRoutingTransport', () => {
  /** A transport whose fetch records the call each request belongs to, and answers 202. */
  async function transport() {
    const found: Array<RoutedCall | undefined> = [];
    const made: { routing?: CallRoutingTransport } = {};
    const fetch: FetchLike = (_url, init) => {
      found.push(made.routing!.callOf(init?.body as string));
      return Promise.resolve(new Response(null, { status: 202 }));
    };
    const routing = new CallRoutingTransport(new URL('http://127.0.0.1:9/mcp'), { fetch });
    made.routing = routing;
    await routing.start();
    return { routing, found };
  }

  // In the SDK's order: the request, then jsonrpc and id (Protocol.request).
  const request = (id: number) => ({ method: 'tools/call', params: { name: 'add' }, jsonrpc: '2.0' as const, id });

  it('finds the call handed over with the request the SDK sends in the same turn, by its id', async () => {
    const { routing, found } = await transport();

    await routing.sendFor(CALL, () => routing.send(request(41)));
    await routing.send(request(42));

    expect(found).toHaveLength(2);
    expect(found[0]?.call).toBe(CALL);
    expect(found[0]?.id).toBe(41);
    expect(found[1]).toBeUndefined();
    expect(routing.callOf(JSON.stringify(request(41)))).toBeUndefined();
  });

  it('hands a message the upstream sent before the result to the client, checked as the SDK checks it', async () => {
    const { routing } = await transport();
    const received: unknown[] = [];
    const errors: unknown[] = [];
    routing.onmessage = (message) => received.push(message);
    routing.onerror = (error) => errors.push(error);

    routing.receive({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 5 } });
    routing.receive({ not: 'json-rpc' });

    expect(received).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 5 } },
    ]);
    expect(errors).toHaveLength(1);
  });

  it('hands nothing to a notification, nor to a request sent a turn later', async () => {
    const { routing, found } = await transport();

    await routing.sendFor(CALL, () => routing.send({ jsonrpc: '2.0', method: 'notifications/cancelled' }));
    await routing.sendFor(CALL, async () => {
      await Promise.resolve();
      await routing.send(request(7));
    });

    expect(found).toEqual([undefined, undefined]);
  });
});

import { LazyAbortController } from '../common';
import { FakeClock } from '../common/fake-clock';
import { HttpPool, type PoolName } from '../containment';
import { EgressPolicy } from '../containment/egress';
import { eventually } from '../../test/support/eventually';
import { UpstreamMcpServer } from '../../test/mcp/upstream-mcp-server';
import { McpUpstream, type SessionKey } from './mcp-upstream';
import type { UpstreamCall } from './upstream-call';

describe('McpUpstream: whose session a call travels in', () => {
  let clock: FakeClock;
  let upstream: UpstreamMcpServer;
  let pools: Map<PoolName, HttpPool>;
  /** The pools asked for, in order: a session being opened asks for its pool. */
  let asked: PoolName[];
  let server: McpUpstream | undefined;

  function poolOf(name: PoolName): HttpPool {
    asked.push(name);
    let pool = pools.get(name);
    if (!pool) {
      pool = new HttpPool(
        { name, maxConcurrency: 8, timeoutMs: 10_000, pooledConnectionLifetimeMs: 60_000 },
        new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.0/8'] }),
        clock,
      );
      pools.set(name, pool);
    }
    return pool;
  }

  function serverOf(limits?: { maxSessions: number; idleMs: number }): McpUpstream {
    server = new McpUpstream(
      { url: upstream.url, headers: {}, timeoutMs: 5_000 },
      { get: (name) => poolOf(name) },
      clock,
      limits,
    );
    return server;
  }

  /** A call as a tool's attempt makes it, through the pool `key` names. */
  function call(key: SessionKey, name: string, args: Record<string, unknown> = {}) {
    const abort = new LazyAbortController();
    const attempt: UpstreamCall = {
      callId: `call-${name}`,
      signal: abort.signal,
      stream: (url, options) => poolOf(key.pool).streamAbortable(url, options, abort),
      timeoutMs: 5_000,
      maxResponseBytes: 1024 * 1024,
    };
    return server!.callTool(name, args, attempt, key);
  }

  async function recall(key: SessionKey): Promise<unknown> {
    return (await call(key, 'recall')).structuredContent;
  }

  beforeEach(async () => {
    clock = new FakeClock();
    upstream = await UpstreamMcpServer.start(0, { memory: true });
    pools = new Map();
    asked = [];
  });

  afterEach(async () => {
    await server?.close();
    server = undefined;
    await upstream.close();
    await Promise.all([...pools.values()].map((pool) => pool.close()));
  });

  it('gives each tenant its own session through each pool: one tenant’s state is not another’s', async () => {
    serverOf();

    await call({ pool: 'normal', tenant: 'acme' }, 'remember', { text: 'acme-secret' });

    expect(await recall({ pool: 'normal', tenant: 'bob' })).toEqual({ remembered: [] });
    expect(await recall({ pool: 'isolated', tenant: 'acme' })).toEqual({ remembered: [] });
    expect(await recall({ pool: 'normal', tenant: 'acme' })).toEqual({ remembered: ['acme-secret'] });
    expect(upstream.sessionsOpened).toHaveLength(3);
    expect(new Set(upstream.calls.map((seen) => seen.sessionId)).size).toBe(3);
  });

  it('shares the pool’s own session, the one that lists, between every call without a tenant', async () => {
    serverOf();
    await server!.list(5_000);

    await call({ pool: 'normal' }, 'remember', { text: 'shared' });

    expect(await recall({ pool: 'normal' })).toEqual({ remembered: ['shared'] });
    expect(await recall({ pool: 'normal', tenant: 'acme' })).toEqual({ remembered: [] });
    const listing = upstream.seen.find((seen) => seen.rpc === 'tools/list');
    expect(upstream.calls.slice(0, 2).map((seen) => seen.sessionId)).toEqual([listing?.sessionId, listing?.sessionId]);
  });

  it('ends the idlest tenant session with its DELETE when a new tenant finds the server at its bound', async () => {
    serverOf({ maxSessions: 2, idleMs: 600_000 });
    await recall({ pool: 'normal', tenant: 'acme' });
    clock.advance(10);
    await recall({ pool: 'normal', tenant: 'bob' });
    clock.advance(10);

    await recall({ pool: 'normal', tenant: 'carol' });

    await eventually(() => expect(upstream.sessionsEnded).toEqual([upstream.sessionsOpened[0]]));
  });

  it('ends a tenant session idle for idleMs with its DELETE, on the clock', async () => {
    serverOf({ maxSessions: 2, idleMs: 600_000 });
    await recall({ pool: 'normal', tenant: 'acme' });

    await clock.advanceAsync(599_999);
    expect(upstream.sessionsEnded).toEqual([]);
    await clock.advanceAsync(60_001);

    await eventually(() => expect(upstream.sessionsEnded).toEqual([upstream.sessionsOpened[0]]));
  });

  it('refuses a call and a listing after close with stopped, and opens nothing', async () => {
    serverOf();
    await recall({ pool: 'normal', tenant: 'acme' });
    await server!.close();
    const seen = upstream.seen.length;
    asked = [];

    const refusals = await Promise.all([
      call({ pool: 'normal', tenant: 'acme' }, 'recall').catch((error: unknown) => error),
      call({ pool: 'isolated', tenant: 'bob' }, 'recall').catch((error: unknown) => error),
      call({ pool: 'normal' }, 'recall').catch((error: unknown) => error),
      server!.list(5_000).catch((error: unknown) => error),
    ]);

    for (const refusal of refusals) expect(refusal).toMatchObject({ kind: 'stopped' });
    expect(asked).toEqual([]);
    expect(upstream.seen.length).toBe(seen);
  });
});

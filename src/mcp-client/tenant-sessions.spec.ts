import { isResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { PoolName } from '../containment';
import { deferred } from '../../test/support/deferred';
import { TENANT_SESSION_LIMITS, TenantSessions } from './tenant-sessions';

/** A session as the table sees it: which pool it was opened for, and whether it was closed. */
class StubSession {
  closed = 0;

  constructor(readonly pool: PoolName) {}

  close(): Promise<void> {
    this.closed++;
    return Promise.resolve();
  }
}

describe('TenantSessions: each tenant’s own upstream sessions, per pool', () => {
  let clock: FakeClock;
  let opened: StubSession[];

  function table(limits = { maxSessions: 3, idleMs: 60_000 }): TenantSessions<StubSession> {
    return new TenantSessions(limits, clock, (pool) => {
      const session = new StubSession(pool);
      opened.push(session);
      return session;
    });
  }

  /** The session a call of `tenant` through `pool` runs in, once it has run. */
  async function sessionOf(sessions: TenantSessions<StubSession>, pool: PoolName, tenant: string) {
    return sessions.use(pool, tenant, (session) => Promise.resolve(session));
  }

  beforeEach(() => {
    clock = new FakeClock();
    opened = [];
  });

  it('opens one session per tenant and pool on first use, and keeps using it', async () => {
    const sessions = table();

    const acme = await sessionOf(sessions, 'normal', 'acme');
    const bob = await sessionOf(sessions, 'normal', 'bob');
    const acmeIsolated = await sessionOf(sessions, 'isolated', 'acme');

    expect(await sessionOf(sessions, 'normal', 'acme')).toBe(acme);
    expect(await sessionOf(sessions, 'isolated', 'acme')).toBe(acmeIsolated);
    expect(new Set([acme, bob, acmeIsolated]).size).toBe(3);
    expect(opened.map((session) => session.pool)).toEqual(['normal', 'normal', 'isolated']);
    expect(sessions.size).toBe(3);
  });

  it('closes the session idle longest to make room at the bound, never one with a call in flight', async () => {
    const sessions = table();
    const held = deferred<void>();
    const acme = await sessionOf(sessions, 'normal', 'acme');
    clock.advance(10);
    const running = sessions.use('normal', 'bob', () => held.promise);
    clock.advance(10);
    const carol = await sessionOf(sessions, 'normal', 'carol');
    clock.advance(10);
    await sessionOf(sessions, 'normal', 'acme');

    await sessionOf(sessions, 'normal', 'dave');

    // bob's is the idlest, but busy; carol's is next (acme's was used since).
    expect(carol.closed).toBe(1);
    expect(acme.closed).toBe(0);
    expect(opened.find((session) => session !== acme && session !== carol)?.closed).toBe(0);
    expect(sessions.size).toBe(3);
    held.resolve();
    await running;
  });

  it('refuses queue_full when every session at the bound has a call in flight, and opens nothing', async () => {
    const sessions = table({ maxSessions: 2, idleMs: 60_000 });
    const held = deferred<void>();
    const running = [sessions.use('normal', 'a', () => held.promise), sessions.use('normal', 'b', () => held.promise)];

    const refused = await sessions.use('normal', 'c', () => Promise.resolve('ran')).catch((error: unknown) => error);

    expect(isResilienceError(refused) && refused.kind).toBe('queue_full');
    expect(refused).toMatchObject({
      message: 'no room for another upstream MCP session: 2 are open, each with a call in flight',
      retryAfterMs: 1_000,
    });
    expect(opened).toHaveLength(2);
    held.resolve();
    await Promise.all(running);
  });

  it('closes a session idle for idleMs on the clock, with a timer armed only while sessions are open', async () => {
    const sessions = table({ maxSessions: 3, idleMs: 60_000 });
    expect(clock.pendingTimers).toBe(0);

    const acme = await sessionOf(sessions, 'normal', 'acme');
    expect(clock.pendingTimers).toBe(1);
    clock.advance(59_999);
    expect(acme.closed).toBe(0);
    clock.advance(60_001);

    expect(acme.closed).toBe(1);
    expect(sessions.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(await sessionOf(sessions, 'normal', 'acme')).not.toBe(acme);
  });

  it('never closes a session while a call in it runs, however long it takes', async () => {
    const sessions = table({ maxSessions: 3, idleMs: 60_000 });
    const held = deferred<void>();
    let session: StubSession | undefined;
    const running = sessions.use('normal', 'acme', (used) => {
      session = used;
      return held.promise;
    });

    clock.advance(600_000);
    expect(session?.closed).toBe(0);
    held.resolve();
    await running;
    clock.advance(59_999);
    expect(session?.closed).toBe(0);
    clock.advance(60_000);

    expect(session?.closed).toBe(1);
  });

  it('closes every session on close, then refuses stopped and opens nothing', async () => {
    const sessions = table();
    const acme = await sessionOf(sessions, 'normal', 'acme');
    const bob = await sessionOf(sessions, 'isolated', 'bob');

    await sessions.close();
    const refused = await sessions.use('normal', 'acme', () => Promise.resolve('ran')).catch((error: unknown) => error);

    expect([acme.closed, bob.closed]).toEqual([1, 1]);
    expect(refused).toMatchObject({ kind: 'stopped' });
    expect(opened).toHaveLength(2);
    expect(clock.pendingTimers).toBe(0);
  });

  it('waits on close for the sessions it closed before (evicted or idle) to end', async () => {
    const ending = deferred<void>();
    let ended = false;
    const sessions = new TenantSessions({ maxSessions: 1, idleMs: 60_000 }, clock, () => ({
      close: () => ending.promise.then(() => void (ended = true)),
    }));
    await sessions.use('normal', 'acme', () => Promise.resolve());
    await sessions.use('normal', 'bob', () => Promise.resolve());

    let closed = false;
    const closing = sessions.close().then(() => void (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
    ending.resolve();
    await closing;

    expect(ended).toBe(true);
  });

  it('defaults to at most 1,000 sessions per server, each closed after 10 minutes idle', () => {
    expect(TENANT_SESSION_LIMITS).toEqual({ maxSessions: 1_000, idleMs: 600_000 });
  });
});

import { EventEmitter } from 'node:events';
import type { LoggerService } from '@nestjs/common';
import { type Deferred, deferred } from '../common/deferred';
import { FakeClock } from '../common/fake-clock';
import { ContainmentCache } from './containment-cache';
import type { ContainmentSnapshot } from './containment-snapshot';
import { RedisInvalidations, type SubscriberConnection } from './redis-invalidations';

const CHANNEL = 'bh:containment';
const PING_MS = 1_000;

/** An ioredis subscriber connection as far as RedisInvalidations uses it; every reply answered by hand. */
class FakeSubscriber extends EventEmitter {
  status = 'connecting';
  readonly subscribes: Array<Deferred<unknown>> = [];
  readonly pings: Array<Deferred<string>> = [];
  readonly disconnects: boolean[] = [];

  subscribe(): Promise<unknown> {
    const reply = deferred<unknown>();
    this.subscribes.push(reply);
    return reply.promise;
  }

  ping(): Promise<string> {
    const reply = deferred<string>();
    this.pings.push(reply);
    return reply.promise;
  }

  disconnect(reconnect = false): void {
    this.disconnects.push(reconnect);
  }

  ready(): void {
    this.status = 'ready';
    this.emit('ready');
  }

  close(): void {
    this.status = 'reconnecting';
    this.emit('close');
    this.emit('reconnecting', 100);
  }
}

const snapshot: ContainmentSnapshot = Object.freeze({
  tenant: 'acme',
  state: 'not_contained',
  posture: 'degraded',
  reason: '',
  version: 1,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

/** Lets the promise callbacks of replies given by hand run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RedisInvalidations', () => {
  let clock: FakeClock;
  let subscriber: FakeSubscriber;
  let cache: ContainmentCache;
  let lines: Array<{ level: string; line: unknown }>;
  let invalidations: RedisInvalidations;

  beforeEach(() => {
    clock = new FakeClock();
    subscriber = new FakeSubscriber();
    cache = new ContainmentCache();
    lines = [];
    const logger: LoggerService = {
      log: (line: unknown) => lines.push({ level: 'info', line }),
      warn: (line: unknown) => lines.push({ level: 'warn', line }),
      error: (line: unknown) => lines.push({ level: 'error', line }),
    };
    invalidations = new RedisInvalidations(subscriber as unknown as SubscriberConnection, cache, {
      channel: CHANNEL,
      clock,
      pingIntervalMs: PING_MS,
      logger,
    });
  });

  afterEach(() => invalidations.close());

  /** Ready, subscribed, the SUBSCRIBE answered: live. */
  async function goLive(): Promise<void> {
    subscriber.ready();
    subscriber.subscribes.at(-1)!.resolve(1);
    await settle();
    expect(cache.live).toBe(true);
  }

  function holdAcme(): void {
    cache.put('acme', snapshot, cache.ticket());
    expect(cache.get('acme')).toBe(snapshot);
  }

  it('is not live until the SUBSCRIBE reply arrives', async () => {
    subscriber.ready();
    await settle();

    expect(subscriber.subscribes).toHaveLength(1);
    expect(cache.live).toBe(false);

    subscriber.subscribes[0].resolve(1);
    await settle();
    expect(cache.live).toBe(true);
  });

  it('drops the tenant a message on its channel names, and nothing for another channel', async () => {
    await goLive();
    holdAcme();

    subscriber.emit('message', 'other:containment', 'acme');
    expect(cache.get('acme')).toBe(snapshot);

    subscriber.emit('message', CHANNEL, 'acme');
    expect(cache.get('acme')).toBeUndefined();
  });

  it.each(['close', 'end', 'reconnecting', 'error'])('goes off and drops every snapshot on %s', async (event) => {
    await goLive();
    holdAcme();

    subscriber.emit(event, event === 'error' ? Object.assign(new Error('reset'), { code: 'ECONNRESET' }) : undefined);

    expect(cache.live).toBe(false);
    expect(cache.get('acme')).toBeUndefined();
  });

  it('subscribes again on the next ready, and is live only once that reply arrives', async () => {
    await goLive();
    subscriber.close();

    subscriber.ready();
    expect(subscriber.subscribes).toHaveLength(2);
    await settle();
    expect(cache.live).toBe(false);

    subscriber.subscribes[1].resolve(1);
    await settle();
    expect(cache.live).toBe(true);
  });

  it('ignores a SUBSCRIBE reply from a connection that was lost since', async () => {
    subscriber.ready();
    subscriber.close();

    subscriber.subscribes[0].resolve(1);
    await settle();

    expect(cache.live).toBe(false);
  });

  it('stays live while every PING is answered within the interval', async () => {
    await goLive();

    for (let check = 0; check < 5; check++) {
      clock.advance(PING_MS);
      subscriber.pings.at(-1)!.resolve('PONG');
      await settle();
    }

    expect(subscriber.pings).toHaveLength(5);
    expect(cache.live).toBe(true);
  });

  it('goes off when a PING is not answered by the next check, and reconnects', async () => {
    await goLive();
    holdAcme();

    clock.advance(PING_MS);
    expect(cache.live).toBe(true);
    clock.advance(PING_MS);

    expect(cache.live).toBe(false);
    expect(cache.get('acme')).toBeUndefined();
    expect(subscriber.disconnects).toEqual([true]);
  });

  it('goes off at once when a PING fails, and reconnects', async () => {
    await goLive();

    clock.advance(PING_MS);
    subscriber.pings[0].reject(new Error('Command timed out'));
    await settle();

    expect(cache.live).toBe(false);
    expect(subscriber.disconnects).toEqual([true]);
  });

  it('subscribes again on a connection that erred without closing', async () => {
    await goLive();
    subscriber.emit('error', new Error('something odd'));
    expect(cache.live).toBe(false);

    clock.advance(PING_MS);
    subscriber.subscribes.at(-1)!.resolve(1);
    await settle();

    expect(subscriber.subscribes).toHaveLength(2);
    expect(cache.live).toBe(true);
  });

  it('logs one line when it goes live and one when it goes off, none while it stays off', async () => {
    await goLive();
    subscriber.close();
    subscriber.emit('error', Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }));
    subscriber.close();

    expect(lines.map(({ level, line }) => [level, (line as { state: string }).state])).toEqual([
      ['info', 'live'],
      ['warn', 'off'],
    ]);
    expect(JSON.stringify(lines)).toContain(CHANNEL);
  });

  it('on close, goes off, stops pinging and closes its connection, without a line', async () => {
    await goLive();
    lines.length = 0;

    invalidations.close();
    subscriber.emit('end');
    clock.advance(10 * PING_MS);

    expect(cache.live).toBe(false);
    expect(subscriber.disconnects).toEqual([false]);
    expect(subscriber.pings).toHaveLength(0);
    expect(clock.pendingTimers).toBe(0);
    expect(lines).toEqual([]);
  });
});

import type { EventEmitter } from 'node:events';
import { Logger, type LoggerService } from '@nestjs/common';
import type { Clock, TimerHandle } from '../common';
import { redisErrorCause } from '../store';
import type { ContainmentCache } from './containment-cache';

/** How often a live subscription is checked with PING; an unanswered one makes it not live at the next check. */
export const INVALIDATION_PING_INTERVAL_MS = 1_000;

/**
 * What {@link RedisInvalidations} uses of its subscriber connection: an ioredis client, or a
 * `ClusterNodeSubscriber` on a Redis Cluster.
 */
/** An EventEmitter's listener, as ioredis's connections take them. */
type EventListener = Parameters<EventEmitter['on']>[1];

export interface SubscriberConnection {
  readonly status: string;
  subscribe(channel: string): Promise<unknown>;
  ping(): Promise<unknown>;
  /** With `reconnect`, a new connection; without, the end. */
  disconnect(reconnect?: boolean): void;
  on(event: string, listener: EventListener): unknown;
}

/** Options a subscriber connection needs on top of the decision connection's it is duplicated from. */
export const SUBSCRIBER_CONNECTION_OPTIONS = {
  // Resubscribing is ours: the cache must not count as live before the SUBSCRIBE reply arrives.
  autoResubscribe: false,
  autoResendUnfulfilledCommands: false,
  enableOfflineQueue: false,
  lazyConnect: false,
} as const;

export interface RedisInvalidationsOptions {
  /** The channel the write and seed scripts publish changed tenants on. */
  channel: string;
  /** Runs the PING checks; the system clock in production (a partition is real time), unref'd. */
  clock: Clock;
  /** @default 1000 */
  pingIntervalMs?: number;
  /** @default new Logger('Bulkhead') */
  logger?: LoggerService;
}

/**
 * Keeps a {@link ContainmentCache} live exactly while its Redis subscription is known to be:
 * from the SUBSCRIBE reply on its own connection until that connection closes, errs,
 * reconnects, or leaves a PING unanswered for one interval (a silently dead link). Each message
 * on the channel invalidates its tenant. Liveness changes log one line each; close() ends it all.
 */
export class RedisInvalidations {
  private readonly logger: LoggerService;
  private readonly pingIntervalMs: number;
  /** Moves on whenever the connection is lost: a reply from before then is stale. */
  private generation = 0;
  private subscribing = false;
  private pingUnanswered = false;
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly subscriber: SubscriberConnection,
    readonly cache: ContainmentCache,
    private readonly options: RedisInvalidationsOptions,
  ) {
    this.logger = options.logger ?? new Logger('Bulkhead');
    this.pingIntervalMs = options.pingIntervalMs ?? INVALIDATION_PING_INTERVAL_MS;
    if (!(this.pingIntervalMs > 0)) throw new RangeError(`pingIntervalMs must be > 0, got ${this.pingIntervalMs}`);
    subscriber.on('message', (channel: string, tenant: string) => {
      if (channel === options.channel) cache.invalidate(tenant);
    });
    subscriber.on('ready', () => this.subscribe());
    for (const event of ['close', 'end', 'reconnecting'] as const) {
      subscriber.on(event, () => this.lost('connection closed'));
    }
    subscriber.on('error', (error: Error) => this.lost(redisErrorCause(error)));
    if (subscriber.status === 'ready') this.subscribe();
    this.schedule();
  }

  /** Stops checking, turns the cache off and closes the subscriber connection. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) this.options.clock.clearTimer(this.timer);
    this.cache.setLive(false);
    this.subscriber.disconnect();
  }

  private subscribe(): void {
    if (this.closed || this.subscribing || this.cache.live) return;
    this.subscribing = true;
    const generation = this.generation;
    this.subscriber.subscribe(this.options.channel).then(
      () => {
        if (generation !== this.generation) return;
        this.subscribing = false;
        this.pingUnanswered = false;
        this.setLive(true, `subscribed to ${this.options.channel}`);
      },
      (error: unknown) => {
        if (generation !== this.generation) return;
        this.subscribing = false;
        this.drop(`SUBSCRIBE failed (${redisErrorCause(error)})`);
      },
    );
  }

  private schedule(): void {
    this.timer = this.options.clock.setTimer(() => this.check(), this.pingIntervalMs, { unref: true });
  }

  /** Every interval: a live subscription whose last PING is still unanswered is dropped; otherwise PING again. */
  private check(): void {
    if (this.closed) return;
    this.schedule();
    if (!this.cache.live) {
      // An error that did not close the connection: subscribe again on it.
      if (this.subscriber.status === 'ready') this.subscribe();
      return;
    }
    if (this.pingUnanswered) {
      this.drop(`no answer to PING within ${this.pingIntervalMs} ms`);
      return;
    }
    this.pingUnanswered = true;
    const generation = this.generation;
    this.subscriber.ping().then(
      () => {
        if (generation === this.generation) this.pingUnanswered = false;
      },
      (error: unknown) => {
        if (generation === this.generation) this.drop(`PING failed (${redisErrorCause(error)})`);
      },
    );
  }

  /** The subscription can no longer be trusted: not live, and a new connection to find out again. */
  private drop(cause: string): void {
    this.lost(cause);
    if (!this.closed) this.subscriber.disconnect(true);
  }

  private lost(cause: string): void {
    this.generation++;
    this.subscribing = false;
    this.pingUnanswered = false;
    this.setLive(false, cause);
  }

  private setLive(live: boolean, cause: string): void {
    if (this.closed) return;
    if (live === this.cache.live) {
      this.cache.setLive(live);
      return;
    }
    this.cache.setLive(live);
    const msg = live
      ? `containment cache: live (${cause})`
      : `containment cache: off, every read goes to Redis (${cause})`;
    const line = { msg, event: 'containment_cache', state: live ? 'live' : 'off', cause };
    if (live) this.logger.log(line);
    else this.logger.warn(line);
  }
}

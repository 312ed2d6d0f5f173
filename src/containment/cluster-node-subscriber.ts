import { EventEmitter } from 'node:events';
import Redis, { type Cluster } from 'ioredis';
import type { SubscriberConnection } from './redis-invalidations';
import { SUBSCRIBER_CONNECTION_OPTIONS } from './redis-invalidations';

/** The longest wait before trying the next node, after repeated failures. */
const MAX_HOP_DELAY_MS = 2_000;
const FIRST_HOP_DELAY_MS = 100;

/**
 * The containment invalidations' subscriber on a Redis Cluster: a connection of its own to one
 * node at a time. A classic PUBLISH reaches every node of a cluster (and is not tied to a slot,
 * so slot migrations do not touch it), so any one node hears every change. The connection
 * never reconnects to the same node: when it ends (the node died, or {@link RedisInvalidations}
 * dropped a silent link), the next node the cluster knows is tried, round robin, after a short
 * wait that grows to 2 s while nodes keep failing. It emits what {@link RedisInvalidations}
 * reads of a Redis connection: `ready`, `message`, `error`, `close`, `end`; its PING and
 * SUBSCRIBE go over the current node's connection, so the liveness rule checks the very link
 * the messages come on.
 *
 * ioredis's own cluster subscriber is not used: it moves to another node by itself, re-subscribing
 * without a word, so a cache could count as live across the moment no node listened.
 */
export class ClusterNodeSubscriber extends EventEmitter implements SubscriberConnection {
  private current: Redis | undefined;
  private turn = 0;
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly cluster: Cluster) {
    super();
    this.connect();
  }

  get status(): string {
    return this.current?.status ?? 'wait';
  }

  subscribe(channel: string): Promise<unknown> {
    return this.current ? this.current.subscribe(channel) : Promise.reject(new Error('no cluster node to listen on'));
  }

  ping(): Promise<unknown> {
    return this.current ? this.current.ping() : Promise.reject(new Error('no cluster node to listen on'));
  }

  /** With `reconnect`, leaves the current node for the next; without, stops for good. */
  disconnect(reconnect = false): void {
    if (!reconnect) {
      this.closed = true;
      clearTimeout(this.timer);
    }
    this.current?.disconnect();
  }

  private connect(): void {
    this.timer = undefined;
    if (this.closed) return;
    const nodes = this.cluster.nodes('all');
    if (nodes.length === 0) {
      this.retry();
      return;
    }
    const node = nodes[this.turn++ % nodes.length];
    // The node's own options: its address (NAT mapped), credentials and TLS, as the cluster uses them.
    const connection = new Redis({
      ...node.options,
      ...SUBSCRIBER_CONNECTION_OPTIONS,
      readOnly: false,
      retryStrategy: () => null,
    });
    this.current = connection;
    const mine = () => this.current === connection;
    connection.on('ready', () => {
      if (!mine()) return;
      this.failures = 0;
      this.emit('ready');
    });
    connection.on('message', (channel: string, message: string) => {
      if (mine()) this.emit('message', channel, message);
    });
    connection.on('error', (error: Error) => {
      if (mine() && this.listenerCount('error') > 0) this.emit('error', error);
    });
    connection.on('close', () => {
      if (mine()) this.emit('close');
    });
    connection.on('end', () => {
      if (!mine()) return;
      this.current = undefined;
      this.emit('end');
      this.retry();
    });
  }

  /** The next node after a wait, longer while nodes keep failing. */
  private retry(): void {
    if (this.closed || this.timer !== undefined) return;
    const delay = Math.min(FIRST_HOP_DELAY_MS * 2 ** this.failures++, MAX_HOP_DELAY_MS);
    this.timer = setTimeout(() => this.connect(), delay);
    this.timer.unref();
  }
}

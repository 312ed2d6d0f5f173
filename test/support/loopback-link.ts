import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/** One connection through a {@link LoopbackLink}: the client's socket and the one to Redis. */
export interface LinkedPair {
  readonly client: Socket;
  readonly upstream: Socket;
}

/**
 * A TCP link on loopback to a Redis at `redisPort`: each connection a client opens gets its own
 * connection to Redis, handed to `join`, which says what crosses it (the tests' faults: a reply
 * lost, a subscription cut). Either side's error or close closes the other and forgets the pair.
 */
export class LoopbackLink<P extends LinkedPair> {
  private readonly pairs = new Set<P>();

  private constructor(private readonly server: Server) {}

  static async open<P extends LinkedPair>(
    redisPort: number,
    pairOf: (client: Socket, upstream: Socket) => P,
    join: (pair: P) => void,
  ): Promise<LoopbackLink<P>> {
    const server = createServer();
    const link = new LoopbackLink<P>(server);
    server.on('connection', (client) => {
      const pair = pairOf(client, connect(redisPort, '127.0.0.1'));
      link.pairs.add(pair);
      join(pair);
      for (const [from, to] of [
        [pair.client, pair.upstream],
        [pair.upstream, pair.client],
      ]) {
        from.on('error', () => to.destroy());
        from.on('close', () => {
          link.pairs.delete(pair);
          to.destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The connections open now. */
  get open(): ReadonlySet<P> {
    return this.pairs;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) pair.client.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  subscriber: boolean;
}

/**
 * A TCP link to a Redis on loopback that tells subscriber connections (those that sent
 * SUBSCRIBE) from the others, so a test can take a replica's subscription away and leave its
 * decision connection alone: `cutSubscribers()` closes them and leaves every later SUBSCRIBE
 * unanswered; `holdSubscribers()` stops them both ways without closing anything (a partition).
 * `delivered(text)` resolves once a message naming `text` was written to a subscriber.
 */
export class PubSubLink {
  private readonly pairs = new Set<Pair>();
  private held = false;
  private readonly waiting: Array<{ text: string; resolve: () => void }> = [];

  private constructor(private readonly server: Server) {}

  static async open(redisPort: number): Promise<PubSubLink> {
    const server = createServer();
    const link = new PubSubLink(server);
    server.on('connection', (client) => link.pipe(client, redisPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Closes every subscriber connection; from now on a SUBSCRIBE goes unanswered. */
  cutSubscribers(): void {
    this.held = true;
    for (const pair of this.pairs) if (pair.subscriber) pair.client.destroy();
  }

  /** Subscriber connections stay open but nothing crosses them either way, as in a partition. */
  holdSubscribers(): void {
    this.held = true;
  }

  /** Resolves once a pub/sub message naming `text` has been written to a subscriber connection. */
  delivered(text: string): Promise<void> {
    return new Promise((resolve) => this.waiting.push({ text, resolve }));
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) pair.client.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket, redisPort: number): void {
    const upstream = connect(redisPort, '127.0.0.1');
    const pair: Pair = { client, upstream, subscriber: false };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (/subscribe/i.test(chunk.toString('latin1'))) pair.subscriber = true;
      if (!(pair.subscriber && this.held)) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (pair.subscriber && this.held) return;
      client.write(chunk, () => this.wrote(pair, chunk));
    });
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ]) {
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.pairs.delete(pair);
        to.destroy();
      });
    }
  }

  private wrote(pair: Pair, chunk: Buffer): void {
    if (!pair.subscriber) return;
    const text = chunk.toString('utf8');
    if (!text.includes('message')) return;
    for (const waiter of [...this.waiting]) {
      if (!text.includes(waiter.text)) continue;
      this.waiting.splice(this.waiting.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}

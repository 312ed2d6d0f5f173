import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

interface Pair {
  client: Socket;
  upstream: Socket;
  /** The next reply from Redis on this connection is lost, and the connection with it. */
  dropNextReply: boolean;
}

/**
 * A TCP link to a Redis on loopback that can lose one reply: `dropReplyTo(marker)` arms it, and
 * the first command sent through it whose bytes contain `marker` reaches Redis and runs, but its
 * reply never reaches the client: the link closes that connection instead, as a connection that
 * broke between the command and its answer. Everything else is piped through as it is.
 */
export class ReplyDroppingLink {
  private readonly pairs = new Set<Pair>();
  private marker: string | undefined;
  private onDropped: (() => void) | undefined;

  private constructor(private readonly server: Server) {}

  static async open(redisPort: number): Promise<ReplyDroppingLink> {
    const server = createServer();
    const link = new ReplyDroppingLink(server);
    server.on('connection', (client) => link.pipe(client, redisPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return link;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Loses the reply to the next command containing `marker`; resolves once it was lost. */
  dropReplyTo(marker: string): Promise<void> {
    this.marker = marker;
    return new Promise((resolve) => (this.onDropped = resolve));
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) pair.client.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket, redisPort: number): void {
    const upstream = connect(redisPort, '127.0.0.1');
    const pair: Pair = { client, upstream, dropNextReply: false };
    this.pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (this.marker !== undefined && chunk.toString('latin1').includes(this.marker)) {
        this.marker = undefined;
        pair.dropNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.dropNextReply) {
        client.write(chunk);
        return;
      }
      pair.dropNextReply = false;
      client.destroy();
      upstream.destroy();
      this.onDropped?.();
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
}

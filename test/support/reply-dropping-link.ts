import { LoopbackLink, type LinkedPair } from './loopback-link';

interface Pair extends LinkedPair {
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
  private marker: string | undefined;
  private onDropped: (() => void) | undefined;
  private link!: LoopbackLink<Pair>;

  static async open(redisPort: number): Promise<ReplyDroppingLink> {
    const dropping = new ReplyDroppingLink();
    dropping.link = await LoopbackLink.open(
      redisPort,
      (client, upstream): Pair => ({ client, upstream, dropNextReply: false }),
      (pair) => dropping.join(pair),
    );
    return dropping;
  }

  get url(): string {
    return this.link.url;
  }

  /** Loses the reply to the next command containing `marker`; resolves once it was lost. */
  dropReplyTo(marker: string): Promise<void> {
    this.marker = marker;
    return new Promise((resolve) => (this.onDropped = resolve));
  }

  close(): Promise<void> {
    return this.link.close();
  }

  private join(pair: Pair): void {
    const { client, upstream } = pair;
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
  }
}

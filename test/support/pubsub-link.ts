import { LoopbackLink, type LinkedPair } from './loopback-link';

interface Pair extends LinkedPair {
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
  private held = false;
  private readonly waiting: Array<{ text: string; resolve: () => void }> = [];
  private link!: LoopbackLink<Pair>;

  static async open(redisPort: number): Promise<PubSubLink> {
    const pubsub = new PubSubLink();
    pubsub.link = await LoopbackLink.open(
      redisPort,
      (client, upstream): Pair => ({ client, upstream, subscriber: false }),
      (pair) => pubsub.join(pair),
    );
    return pubsub;
  }

  get url(): string {
    return this.link.url;
  }

  /** Closes every subscriber connection; from now on a SUBSCRIBE goes unanswered. */
  cutSubscribers(): void {
    this.held = true;
    for (const pair of this.link.open) if (pair.subscriber) pair.client.destroy();
  }

  /** Subscriber connections stay open but nothing crosses them either way, as in a partition. */
  holdSubscribers(): void {
    this.held = true;
  }

  /** Resolves once a pub/sub message naming `text` has been written to a subscriber connection. */
  delivered(text: string): Promise<void> {
    return new Promise((resolve) => this.waiting.push({ text, resolve }));
  }

  close(): Promise<void> {
    return this.link.close();
  }

  private join(pair: Pair): void {
    const { client, upstream } = pair;
    client.on('data', (chunk: Buffer) => {
      if (/subscribe/i.test(chunk.toString('latin1'))) pair.subscriber = true;
      if (!(pair.subscriber && this.held)) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (pair.subscriber && this.held) return;
      client.write(chunk, () => this.wrote(pair, chunk));
    });
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

import type { Agent } from 'undici';
import type { Clock } from '../common';

/**
 * A pool's undici Agent, replaced by a fresh one once it is `lifetimeMs` old (on the injected
 * clock): the next request goes out on new connections, resolved and checked anew, and the old
 * Agent closes once its requests in flight are done. So no connection outlives the lifetime by
 * more than its last request, and DNS changes are picked up. undici's own `clientTtl` does the
 * same per connection, but reads the wall clock for every connection on every request.
 */
export class AgentGenerations {
  private current: Agent;
  private bornAt: number;
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private readonly make: () => Agent,
    private readonly lifetimeMs: number,
    private readonly clock: Clock,
  ) {
    this.current = make();
    this.bornAt = clock.now();
  }

  /** The Agent for a request now. */
  get(): Agent {
    const now = this.clock.now();
    if (now - this.bornAt >= this.lifetimeMs) {
      this.retire(this.current);
      this.current = this.make();
      this.bornAt = now;
    }
    return this.current;
  }

  /** Closes every generation: in-flight requests end first. */
  async close(): Promise<void> {
    this.retire(this.current);
    await Promise.all(this.retiring);
  }

  private retire(agent: Agent): void {
    const closing = agent.close().then(
      () => void this.retiring.delete(closing),
      () => void this.retiring.delete(closing),
    );
    this.retiring.add(closing);
  }
}

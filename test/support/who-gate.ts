import type { ServerResponse } from 'node:http';
import { deferred } from './deferred';
import type { UpstreamRequest } from './upstream';

/**
 * An upstream handler that holds every request until the test releases it, then answers the
 * request's own JSON body. It counts requests in flight per `who` (from the body), the most at
 * once, and the remote ports each `who` arrived on.
 */
export class WhoGate {
  private readonly held: Array<() => void> = [];
  private open = false;
  private readonly current = new Map<string, number>();
  private readonly most = new Map<string, number>();
  private readonly portsBy = new Map<string, Set<number>>();

  readonly handler = async (request: UpstreamRequest, response: ServerResponse): Promise<void> => {
    const who = String((JSON.parse(request.body || '{}') as { who?: unknown }).who ?? '');
    this.current.set(who, this.inFlight(who) + 1);
    this.most.set(who, Math.max(this.peak(who), this.inFlight(who)));
    this.portsBy.set(who, (this.portsBy.get(who) ?? new Set()).add(request.remotePort));
    response.on('close', () => this.current.set(who, this.inFlight(who) - 1));
    if (!this.open) {
      const release = deferred<void>();
      this.held.push(release.resolve);
      await release.promise;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(request.body || '{}');
  };

  /** @param open answer at once, holding nothing (until then every request waits). */
  constructor(open = false) {
    this.open = open;
  }

  inFlight(who: string): number {
    return this.current.get(who) ?? 0;
  }

  peak(who: string): number {
    return this.most.get(who) ?? 0;
  }

  ports(who: string): Set<number> {
    return this.portsBy.get(who) ?? new Set();
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Answers every held request, and every later one at once. */
  releaseAll(): void {
    this.open = true;
    for (const release of this.held.splice(0)) release();
  }
}

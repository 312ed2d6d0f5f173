import type { Audience, Clock, Viewer } from '../common';

/**
 * One line of the ledger. Fixed fields only: never arguments, results, prompts, upstream
 * bodies or secrets. `status` is `ok`, an error kind, `cancelled` (the caller left while the
 * call waited) or `finished_after_caller_cancel` (the caller left while it ran).
 */
export interface LedgerEvent {
  at: string;
  callId: string;
  toolId: string;
  lane: string;
  tenant: string;
  status: string;
  /**
   * Only on a call that chaos touched: what it injected into its attempts, in order (a fault
   * kind or `latency`), so a rehearsed failure is never mistaken for a real one.
   */
  chaos?: string[];
}

interface Entry {
  atMs: number;
  callId: string;
  toolId: string;
  lane: string;
  tenant: string;
  status: string;
  chaos: readonly string[] | undefined;
  /** Of an event of no tenant: who may see it; everyone when undefined. */
  audience: Audience | undefined;
}

/** The bounded ring of recent call outcomes behind `GET /v1/events`. */
export class EventLedger {
  private readonly entries: Array<Entry | undefined>;
  private next = 0;
  private count = 0;

  constructor(
    readonly capacity: number,
    private readonly clock: Clock,
  ) {
    if (!Number.isSafeInteger(capacity) || capacity < 1)
      throw new RangeError('capacity must be an integer of at least 1');
    this.entries = new Array<Entry | undefined>(capacity);
  }

  record(
    callId: string,
    toolId: string,
    lane: string,
    tenant: string,
    status: string,
    chaos?: readonly string[],
    audience?: Audience,
  ): void {
    const atMs = this.clock.wallNow();
    // Entries are reused in place: a new one per call would live for `capacity` calls, long
    // enough to be promoted to the old generation and cost a full GC's work there.
    const entry = this.entries[this.next];
    if (entry) {
      entry.atMs = atMs;
      entry.callId = callId;
      entry.toolId = toolId;
      entry.lane = lane;
      entry.tenant = tenant;
      entry.status = status;
      entry.chaos = chaos;
      entry.audience = audience;
    } else {
      this.entries[this.next] = { atMs, callId, toolId, lane, tenant, status, chaos, audience };
    }
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /**
   * The newest `limit` events, oldest first. With `viewer`, only what it may see: its tenant's
   * events, and those of no tenant (breaker transitions, chaos on an LLM target) whose
   * audience admits it. Without, every event: the operators' view.
   */
  recent(limit = this.capacity, viewer?: Viewer): LedgerEvent[] {
    const wanted = Math.max(0, Math.floor(limit));
    const picked: Entry[] = [];
    for (let i = 1; i <= this.count && picked.length < wanted; i++) {
      const entry = this.entries[(this.next - i + this.capacity) % this.capacity]!;
      if (viewer === undefined || seenBy(entry, viewer)) picked.push(entry);
    }
    const events: LedgerEvent[] = [];
    for (let i = picked.length - 1; i >= 0; i--) {
      const entry = picked[i]!;
      const event: LedgerEvent = {
        at: new Date(entry.atMs).toISOString(),
        callId: entry.callId,
        toolId: entry.toolId,
        lane: entry.lane,
        tenant: entry.tenant,
        status: entry.status,
      };
      if (entry.chaos) event.chaos = [...entry.chaos];
      events.push(event);
    }
    return events;
  }
}

function seenBy(entry: Entry, viewer: Viewer): boolean {
  if (entry.tenant !== '') return entry.tenant === viewer.tenant;
  return entry.audience === undefined || entry.audience(viewer);
}

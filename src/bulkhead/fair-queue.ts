/**
 * What a {@link FairQueue} holds. The queue links nodes in place through these fields, so
 * adding and removing allocate nothing and a node is removed in O(1) wherever it stands.
 */
export interface FairQueueNode<T> {
  readonly tenant: string;
  prev: T | undefined;
  next: T | undefined;
  owner: TenantQueue<T> | undefined;
}

/** One tenant's FIFO, and its place in the round-robin ring of tenants with waiting nodes. */
export class TenantQueue<T> {
  head: T | undefined;
  tail: T | undefined;
  size = 0;
  ringPrev: TenantQueue<T> = this;
  ringNext: TenantQueue<T> = this;

  constructor(readonly tenant: string) {}
}

/**
 * FIFO per tenant, served round-robin across tenants, so one tenant's burst waits behind its
 * own earlier calls instead of in front of everybody else's. Every operation is O(1).
 */
export class FairQueue<T extends FairQueueNode<T>> {
  private readonly byTenant = new Map<string, TenantQueue<T>>();
  /** The tenant served next; undefined when nothing waits. */
  private cursor: TenantQueue<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  sizeOf(tenant: string): number {
    return this.byTenant.get(tenant)?.size ?? 0;
  }

  push(node: T): void {
    let queue = this.byTenant.get(node.tenant);
    if (!queue) {
      queue = new TenantQueue<T>(node.tenant);
      this.byTenant.set(node.tenant, queue);
      this.joinRing(queue);
    }
    node.owner = queue;
    node.next = undefined;
    node.prev = queue.tail;
    if (queue.tail) queue.tail.next = node;
    else queue.head = node;
    queue.tail = node;
    queue.size++;
    this.count++;
  }

  /** Takes the oldest node of the next tenant in turn. */
  shift(): T | undefined {
    const queue = this.cursor;
    if (!queue) return undefined;
    const node = queue.head!;
    this.remove(node);
    // If the tenant still waits, the turn passes to the one after it; if it left the ring,
    // remove() already moved the cursor on.
    if (queue.size > 0) this.cursor = queue.ringNext;
    return node;
  }

  /** Removes a node that is in this queue; does nothing for one that is not. */
  remove(node: T): void {
    const queue = node.owner;
    if (!queue) return;
    if (node.prev) node.prev.next = node.next;
    else queue.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else queue.tail = node.prev;
    node.prev = node.next = node.owner = undefined;
    queue.size--;
    this.count--;
    if (queue.size === 0) this.leaveRing(queue);
  }

  /** New tenants join at the end of the current round: just before the cursor. */
  private joinRing(queue: TenantQueue<T>): void {
    const cursor = this.cursor;
    if (!cursor) {
      this.cursor = queue;
      return;
    }
    queue.ringNext = cursor;
    queue.ringPrev = cursor.ringPrev;
    cursor.ringPrev.ringNext = queue;
    cursor.ringPrev = queue;
  }

  private leaveRing(queue: TenantQueue<T>): void {
    this.byTenant.delete(queue.tenant);
    if (queue.ringNext === queue) {
      this.cursor = undefined;
      return;
    }
    queue.ringPrev.ringNext = queue.ringNext;
    queue.ringNext.ringPrev = queue.ringPrev;
    if (this.cursor === queue) this.cursor = queue.ringNext;
    queue.ringNext = queue.ringPrev = queue;
  }
}

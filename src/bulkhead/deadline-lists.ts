/**
 * What {@link DeadlineLists} holds. Nodes are linked in place through these fields, so adding
 * and removing allocate nothing and a node is removed in O(1) wherever it stands.
 */
export interface DeadlineNode<T> {
  deadline: number;
  deadlinePrev: T | undefined;
  deadlineNext: T | undefined;
  deadlineList: DeadlineList<T> | undefined;
}

/** The nodes of one TTL, oldest first: the same TTL on a monotonic clock keeps deadlines in arrival order. */
export class DeadlineList<T> {
  head: T | undefined;
  tail: T | undefined;

  constructor(readonly ttlMs: number) {}
}

/**
 * Waiting calls by deadline, for the one queue-TTL timer of a lane (queue-expiry.ts). Calls are kept in one FIFO
 * per TTL: adding and removing are O(1), and the earliest deadline is the earliest of the
 * lists' heads. A lane has one TTL, plus the few shorter ones callers ask for; a list that
 * empties is dropped.
 */
export class DeadlineLists<T extends DeadlineNode<T>> {
  private readonly byTtl = new Map<number, DeadlineList<T>>();

  /** TTLs with a node waiting (for tests of the memory bound). */
  get ttlCount(): number {
    return this.byTtl.size;
  }

  /** Appends `node`, due at `now + ttlMs`. */
  add(node: T, ttlMs: number, now: number): void {
    let list = this.byTtl.get(ttlMs);
    if (!list) {
      list = new DeadlineList<T>(ttlMs);
      this.byTtl.set(ttlMs, list);
    }
    node.deadline = now + ttlMs;
    node.deadlineList = list;
    node.deadlineNext = undefined;
    node.deadlinePrev = list.tail;
    if (list.tail) list.tail.deadlineNext = node;
    else list.head = node;
    list.tail = node;
  }

  /** Removes a node that is in these lists; does nothing for one that is not. */
  remove(node: T): void {
    const list = node.deadlineList;
    if (!list) return;
    if (node.deadlinePrev) node.deadlinePrev.deadlineNext = node.deadlineNext;
    else list.head = node.deadlineNext;
    if (node.deadlineNext) node.deadlineNext.deadlinePrev = node.deadlinePrev;
    else list.tail = node.deadlinePrev;
    node.deadlinePrev = node.deadlineNext = node.deadlineList = undefined;
    if (!list.head) this.byTtl.delete(list.ttlMs);
  }

  /** The earliest deadline held; undefined when empty. */
  earliest(): number | undefined {
    let earliest: number | undefined;
    for (const list of this.byTtl.values()) {
      const deadline = list.head!.deadline;
      if (earliest === undefined || deadline < earliest) earliest = deadline;
    }
    return earliest;
  }

  /** Removes and answers a node whose deadline is at or before `now`, earliest first; undefined when none is due. */
  takeDue(now: number): T | undefined {
    let due: T | undefined;
    for (const list of this.byTtl.values()) {
      const head = list.head!;
      if (head.deadline <= now && (due === undefined || head.deadline < due.deadline)) due = head;
    }
    if (due) this.remove(due);
    return due;
  }
}

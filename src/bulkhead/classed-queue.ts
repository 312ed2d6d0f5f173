import { FairQueue, type FairQueueNode } from './fair-queue';
import type { PriorityRank } from './priority';

/** What a {@link ClassedQueue} holds: a fair-queue node with its class and its place in its class's arrival order. */
export interface ClassedQueueNode<T> extends FairQueueNode<T> {
  rank: PriorityRank;
  arrivalPrev: T | undefined;
  arrivalNext: T | undefined;
}

/** One class's waiting nodes: fair between tenants, and in arrival order (its newest is displaced first). */
class ClassQueue<T extends ClassedQueueNode<T>> {
  readonly fair = new FairQueue<T>();
  oldest: T | undefined;
  newest: T | undefined;
}

/**
 * The waiting calls of a lane by priority class: the highest class with a waiting call is served
 * first, and inside a class tenants take turns (a {@link FairQueue} per class). Each class also
 * keeps its arrival order, so a full lane can displace the newest call of its lowest class.
 * Every operation is O(1) and allocates nothing but a tenant's first entry in a class.
 */
export class ClassedQueue<T extends ClassedQueueNode<T>> {
  private readonly classes = [new ClassQueue<T>(), new ClassQueue<T>(), new ClassQueue<T>()] as const;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Waiting nodes of `tenant`, in every class. */
  sizeOf(tenant: string): number {
    const [critical, standard, sheddable] = this.classes;
    return critical.fair.sizeOf(tenant) + standard.fair.sizeOf(tenant) + sheddable.fair.sizeOf(tenant);
  }

  sizeOfClass(rank: PriorityRank): number {
    return this.classes[rank].fair.size;
  }

  /** Adds `node` in the class of its `rank`. */
  push(node: T): void {
    const queue = this.classes[node.rank];
    queue.fair.push(node);
    node.arrivalNext = undefined;
    node.arrivalPrev = queue.newest;
    if (queue.newest) queue.newest.arrivalNext = node;
    else queue.oldest = node;
    queue.newest = node;
    this.count++;
  }

  /** Takes the node served next: of the highest class with one waiting, the next tenant's in turn. */
  shift(): T | undefined {
    for (const queue of this.classes) {
      if (queue.fair.size === 0) continue;
      const node = queue.fair.shift()!;
      this.unlinkArrival(queue, node);
      return node;
    }
    return undefined;
  }

  /** Removes a node that waits here; does nothing for one that does not. */
  remove(node: T): void {
    if (!node.owner) return;
    const queue = this.classes[node.rank];
    queue.fair.remove(node);
    this.unlinkArrival(queue, node);
  }

  /**
   * The newest node of the lowest class that waits, if that class ranks below `rank` (served
   * later): what a call of class `rank` displaces from a full queue. Undefined when nothing
   * below it waits.
   */
  newestBelow(rank: PriorityRank): T | undefined {
    for (let lower = 2; lower > rank; lower--) {
      const { newest } = this.classes[lower as PriorityRank];
      if (newest) return newest;
    }
    return undefined;
  }

  private unlinkArrival(queue: ClassQueue<T>, node: T): void {
    if (node.arrivalPrev) node.arrivalPrev.arrivalNext = node.arrivalNext;
    else queue.oldest = node.arrivalNext;
    if (node.arrivalNext) node.arrivalNext.arrivalPrev = node.arrivalPrev;
    else queue.newest = node.arrivalPrev;
    node.arrivalPrev = node.arrivalNext = undefined;
    this.count--;
  }
}

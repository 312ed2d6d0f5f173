/** What an item of a {@link RecencyList} carries: its neighbours, `older` towards the next to evict. */
export interface RecencyLinks<T> {
  older: T | undefined;
  newer: T | undefined;
}

/**
 * The items of a bounded cache in the order they were last used, as a doubly linked list kept in
 * the items themselves: moving one to the newest end and dropping the oldest are O(1) and make
 * no allocation.
 */
export class RecencyList<T extends RecencyLinks<T>> {
  oldest: T | undefined;
  newest: T | undefined;

  /** Puts `item` (not in the list) at the newest end. */
  append(item: T): void {
    item.older = this.newest;
    item.newer = undefined;
    if (this.newest) this.newest.newer = item;
    else this.oldest = item;
    this.newest = item;
  }

  /** Takes `item` out of the list. */
  unlink(item: T): void {
    if (item.older) item.older.newer = item.newer;
    else this.oldest = item.newer;
    if (item.newer) item.newer.older = item.older;
    else this.newest = item.older;
    item.older = undefined;
    item.newer = undefined;
  }

  /** Moves `item` (in the list) to the newest end: it was just used. */
  touch(item: T): void {
    if (item === this.newest) return;
    this.unlink(item);
    this.append(item);
  }
}

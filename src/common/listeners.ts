/**
 * The listeners of one kind of event: `add` returns a function that removes the listener, and
 * `emit` calls each in the order added. Removing makes a new array, so a listener that removes
 * itself (or another) while an event is emitted never makes the loop skip one.
 */
export class Listeners<Args extends unknown[]> {
  private items: Array<(...args: Args) => void> = [];

  add(listener: (...args: Args) => void): () => void {
    this.items.push(listener);
    return () => {
      this.items = this.items.filter((item) => item !== listener);
    };
  }

  emit(...args: Args): void {
    for (const listener of this.items) listener(...args);
  }

  clear(): void {
    this.items = [];
  }
}

import { WebSocket } from 'undici';

/** A minimal Chrome DevTools Protocol client over the service's inspector WebSocket. */
export class Inspector {
  private nextId = 1;
  private readonly pending = new Map<number, { done: (result: unknown) => void; fail: (error: Error) => void }>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
      const waiter = message.id === undefined ? undefined : this.pending.get(message.id);
      if (!waiter) return;
      this.pending.delete(message.id!);
      if (message.error) waiter.fail(new Error(message.error.message));
      else waiter.done(message.result);
    });
    socket.addEventListener('close', () => {
      for (const waiter of this.pending.values()) waiter.fail(new Error('the inspector closed'));
      this.pending.clear();
    });
  }

  static connect(url: string): Promise<Inspector> {
    return new Promise((done, fail) => {
      const socket = new WebSocket(url);
      socket.addEventListener('open', () => done(new Inspector(socket)), { once: true });
      socket.addEventListener('error', () => fail(new Error(`cannot reach the inspector at ${url}`)), { once: true });
    });
  }

  call<T>(method: string): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((done, fail) => {
      this.pending.set(id, { done: done as (result: unknown) => void, fail });
      this.socket.send(JSON.stringify({ id, method }));
    });
  }

  close(): void {
    this.socket.close();
  }
}

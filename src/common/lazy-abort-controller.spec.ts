import { LazyAbortController } from './lazy-abort-controller';

describe('LazyAbortController', () => {
  it('starts neither aborted nor with a reason', () => {
    const controller = new LazyAbortController();
    expect(controller.aborted).toBe(false);
    expect(controller.reason).toBeUndefined();
  });

  it('creates its signal already aborted, with the reason, when it was aborted before anyone asked', () => {
    const controller = new LazyAbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    const { signal } = controller;
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);
  });

  it('aborts a signal created earlier, once, with the reason', () => {
    const controller = new LazyAbortController();
    const signal = controller.signal;
    const listener = jest.fn();
    signal.addEventListener('abort', listener);
    expect(signal.aborted).toBe(false);
    controller.abort('first');
    controller.abort('second');
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe('first');
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('hands out the same signal every time', () => {
    const controller = new LazyAbortController();
    expect(controller.signal).toBe(controller.signal);
  });

  it('calls each listener once, in the order added, with the reason', () => {
    const controller = new LazyAbortController();
    const calls: string[] = [];
    const reason = { why: 'client left' };
    controller.onAbort((got) => calls.push(`a:${got === reason}`));
    controller.onAbort((got) => calls.push(`b:${got === reason}`));
    controller.onAbort((got) => calls.push(`c:${got === reason}`));
    controller.abort(reason);
    controller.abort('again');
    expect(calls).toEqual(['a:true', 'b:true', 'c:true']);
  });

  it('runs listeners synchronously inside abort()', () => {
    const controller = new LazyAbortController();
    let called = false;
    controller.onAbort(() => (called = true));
    controller.abort('now');
    expect(called).toBe(true);
  });

  it('does not call a listener that was removed, and keeps the others', () => {
    const controller = new LazyAbortController();
    const kept = jest.fn();
    const removed = jest.fn();
    controller.onAbort(kept);
    const remove = controller.onAbort(removed);
    remove();
    remove();
    controller.abort('x');
    expect(removed).not.toHaveBeenCalled();
    expect(kept).toHaveBeenCalledWith('x');
  });

  it('removes only the registration it was returned for when one listener is added twice', () => {
    const controller = new LazyAbortController();
    const listener = jest.fn();
    const removeFirst = controller.onAbort(listener);
    controller.onAbort(listener);
    removeFirst();
    controller.abort('x');
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('keeps the first reason when aborted again', () => {
    const controller = new LazyAbortController();
    controller.abort('first');
    controller.abort('second');
    expect(controller.aborted).toBe(true);
    expect(controller.reason).toBe('first');
    expect(controller.signal.reason).toBe('first');
  });

  it('calls a listener added after abort at once, with the reason, and gives a harmless remover', () => {
    const controller = new LazyAbortController();
    controller.abort('late');
    const listener = jest.fn();
    const remove = controller.onAbort(listener);
    expect(listener).toHaveBeenCalledTimes(1);
    expect(listener).toHaveBeenCalledWith('late');
    expect(() => remove()).not.toThrow();
    controller.abort('again');
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('lets a remover returned before abort be called after it', () => {
    const controller = new LazyAbortController();
    const listener = jest.fn();
    const remove = controller.onAbort(listener);
    controller.abort('x');
    expect(() => remove()).not.toThrow();
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('aborts with undefined as a real abort', () => {
    const controller = new LazyAbortController();
    const listener = jest.fn();
    controller.onAbort(listener);
    controller.abort(undefined);
    expect(controller.aborted).toBe(true);
    expect(listener).toHaveBeenCalledTimes(1);
  });
});

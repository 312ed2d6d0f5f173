import { LazyAbortController, ResilienceError } from '../common';
import type { CallExecutor } from './call-executor';
import type { ToolDefinition } from './tool';
import { ToolCallWork } from './tool-call-work';

/** A call of a tool whose own timeout is 5 s, made with `timeoutMs`: what its lane learns from how it ends. */
function work(timeoutMs: number): ToolCallWork {
  const tool = { id: 'lookup', timeoutMs: 5_000 } as ToolDefinition;
  const call = {
    tool,
    arguments: {},
    callId: 'c-1',
    tenant: 'acme',
    pool: 'normal' as const,
    timeoutMs,
    idempotencyKey: undefined,
  };
  const started = new ToolCallWork(
    {} as CallExecutor,
    call,
    new LazyAbortController(),
    { attempts: 0, started: false },
    undefined,
  );
  // The caller's answer is theirs; the lane reads only the signal.
  started.answer.catch(() => undefined);
  return started;
}

const TIMEOUT = new ResilienceError('timeout', 'the attempt timed out');

describe('ToolCallWork, as an adaptive lane reads it', () => {
  it('is a drop when the call timed out at the tool’s own timeout', () => {
    const call = work(5_000);
    call.reject(TIMEOUT);

    expect(call.limitSignal()).toBe('drop');
  });

  it('teaches the lane nothing when it timed out at a timeout its caller shortened (X-Timeout-Ms)', () => {
    const call = work(1);
    call.reject(TIMEOUT);

    expect(call.limitSignal()).toBe('ignore');
  });

  it('is still a sample when a call with a shortened timeout answered in time', () => {
    const call = work(1_000);
    call.resolve({ ok: true });

    expect(call.limitSignal()).toBe('sample');
  });
});

import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, type Clock, isResilienceError, LazyAbortController, ResilienceError } from '../common';
import type { ToolArguments, ToolContext, ToolDefinition } from './tool';

/** Who is calling: what an attempt needs of its call. */
export interface AttemptCall {
  callId: string;
  tenant: string;
  abort: LazyAbortController;
}

class AttemptContext implements ToolContext {
  constructor(
    readonly callId: string,
    readonly toolId: string,
    readonly tenant: string,
    private readonly abort: LazyAbortController,
  ) {}

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

/**
 * Runs one attempt of a tool with its own AbortController: aborted when the call is, and at
 * the attempt's deadline, when the attempt is reported `timeout`. Errors come out as
 * ResilienceErrors; a handler's own unexpected error becomes `internal`, without its message.
 */
@Injectable()
export class AttemptRunner {
  private readonly logger = new Logger('Bulkhead');

  constructor(@Inject(CLOCK) private readonly clock: Clock) {}

  async run(tool: ToolDefinition, args: ToolArguments, call: AttemptCall, timeoutMs: number): Promise<unknown> {
    const attempt = new LazyAbortController();
    const detach = call.abort.onAbort((reason) => attempt.abort(reason));
    let timedOut = false;
    const timer = this.clock.setTimer(() => {
      timedOut = true;
      attempt.abort(timeoutError(tool, timeoutMs));
    }, timeoutMs);
    try {
      const result = await tool.handler(args, new AttemptContext(call.callId, tool.id, call.tenant, attempt));
      // The deadline passed while the answer was on its way: the caller was promised `timeout`.
      if (timedOut) throw timeoutError(tool, timeoutMs);
      return result;
    } catch (error) {
      if (timedOut) throw timeoutError(tool, timeoutMs);
      if (call.abort.aborted) throw call.abort.reason;
      if (isResilienceError(error)) throw error;
      this.logger.warn(`tool '${tool.id}' threw ${describe(error)}; answered as internal${stackFrames(error)}`);
      throw new ResilienceError('internal', `tool '${tool.id}' failed`);
    } finally {
      this.clock.clearTimer(timer);
      detach();
    }
  }
}

function timeoutError(tool: ToolDefinition, timeoutMs: number): ResilienceError {
  return new ResilienceError('timeout', `tool '${tool.id}' did not finish within ${timeoutMs} ms`);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.constructor.name : typeof error;
}

/** The stack without its first line: where it failed, without a message that may hold arguments. */
function stackFrames(error: unknown): string {
  const stack = error instanceof Error ? error.stack : undefined;
  const frames = stack?.split('\n').filter((line) => line.trimStart().startsWith('at '));
  return frames?.length ? `\n${frames.join('\n')}` : '';
}

import { isResilienceError } from '../common';
import { CLIENT_CLOSED } from '../common/nest';

/** How a call ended, as far as the ledger and metrics are concerned. */
export interface CallEnding {
  /** The error the caller got (a ResilienceError on every call path); undefined on success. */
  error?: unknown;
  /** Whether the caller's abort fired, and why. */
  abort: { readonly aborted: boolean; readonly reason: unknown };
  /** Whether the handler started (a lane slot was taken). */
  started: boolean;
}

/**
 * The ledger status of a finished call: `ok`, an error kind, `cancelled` when the client left
 * before the handler started, `finished_after_caller_cancel` when it left while the handler
 * ran (the work went on until the handler settled), or `error` for a company handler's own
 * non-contract error.
 */
export function callStatus(ending: CallEnding): string {
  if (ending.abort.aborted && ending.abort.reason === CLIENT_CLOSED) {
    return ending.started ? 'finished_after_caller_cancel' : 'cancelled';
  }
  if (ending.error === undefined) return 'ok';
  return isResilienceError(ending.error) ? ending.error.kind : 'error';
}

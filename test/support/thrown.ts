import { isResilienceError } from '../../src/common';

/** `kind: message` of the ResilienceError `fn` throws; fails the test when it throws nothing. */
export function thrownKindAndMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isResilienceError(error)) return `${error.kind}: ${error.message}`;
    throw error;
  }
  throw new Error('accepted');
}

/**
 * What `fn` did, as data to compare: `{ ok: <its value> }`, or `{ kind, message }` of the
 * ResilienceError it threw (anything else it throws fails the test).
 */
export function returnedOrThrown(fn: () => unknown): unknown {
  try {
    return { ok: fn() };
  } catch (error) {
    if (!isResilienceError(error)) throw error;
    return { kind: error.kind, message: error.message };
  }
}

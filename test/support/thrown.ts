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

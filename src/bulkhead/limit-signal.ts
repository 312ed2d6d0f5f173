import { ResilienceError } from '../common';
import type { LimitSignal } from './lane.types';

/**
 * What a call's outcome tells an adaptive limit: a success's time counts, a timeout is a drop,
 * and any other failure is ignored: a refusal of ours (an open circuit, a budget) never reached
 * the dependency, and an error it answered quickly would read as a fast dependency.
 */
export function limitSignalOf(outcome: unknown, succeeded: boolean): LimitSignal {
  if (succeeded) return 'sample';
  return outcome instanceof ResilienceError && outcome.kind === 'timeout' ? 'drop' : 'ignore';
}

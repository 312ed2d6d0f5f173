import { ResilienceError } from '../common';
import type { Lane } from './lane';
import type { LaneRejection } from './lane.types';

/** The client-facing error for a lane's refusal, with a useful Retry-After where one exists. */
export function laneRejectionError(lane: Lane, rejection: LaneRejection): ResilienceError {
  switch (rejection) {
    case 'queue_full': {
      // Not snapshot(): a refusal builds nothing it does not send.
      return new ResilienceError(
        'queue_full',
        `lane '${lane.name}' is full: ${lane.running} running, ${lane.waiting} waiting`,
        {
          retryAfterMs: lane.retryAfterMs(),
        },
      );
    }
    case 'tenant_queue_full':
      return new ResilienceError(
        'queue_full',
        `lane '${lane.name}' already holds the ${lane.maxQueuedPerTenant} waiting calls one tenant may have`,
        { retryAfterMs: lane.retryAfterMs() },
      );
    case 'stopped':
      return new ResilienceError('stopped', `lane '${lane.name}' is shutting down`);
  }
}

import { ResilienceError } from './errors/resilience-error';
import { uniqueIds } from './unique-id';

/** A call id: 1-48 letters, digits, `_` or `-` (`X-Call-Id`, a batch entry's `callId`). */
export const CALL_ID_PATTERN = /^[A-Za-z0-9_-]{1,48}$/;

/**
 * The call's id from the `X-Call-Id` header, or a new one when there is none. An invalid id is
 * refused and never echoed: it is caller input that would otherwise reach logs and the ledger.
 */
export function resolveCallId(header: string | string[] | undefined): string {
  if (header === undefined) return uniqueIds.next();
  if (typeof header === 'string' && CALL_ID_PATTERN.test(header)) return header;
  throw new ResilienceError('invalid_request', 'X-Call-Id must be 1-48 letters, digits, "_" or "-"');
}

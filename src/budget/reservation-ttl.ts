/**
 * Checks a reservation's id and answers its TTL in whole milliseconds, rounded up: what every
 * budget store asks of a reserve and a renew.
 * @throws RangeError for an empty id, or a TTL that is not a finite number of milliseconds above 0.
 */
export function reservationTtlMs(reservationId: string, ttlMs: number): number {
  if (typeof reservationId !== 'string' || reservationId.length === 0) {
    throw new RangeError('reservationId must be a non-empty string');
  }
  if (!Number.isFinite(ttlMs) || ttlMs <= 0 || Math.ceil(ttlMs) > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(`ttlMs must be a finite number of milliseconds above 0, got ${String(ttlMs)}`);
  }
  return Math.ceil(ttlMs);
}

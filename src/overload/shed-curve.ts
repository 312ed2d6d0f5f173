import type { PriorityRank } from '../bulkhead';

/**
 * Pressure (the worse of delay and heap, each over its threshold) below which an overloaded
 * guard recovers: 20 % under the threshold, so a reading that hovers at it does not flap the
 * guard on and off.
 */
export const RECOVERY_PRESSURE = 0.8;

/** Pressure at which the level reaches 1: twice the threshold. */
const FULL_PRESSURE = 2;

/**
 * How far past recovery the process is, 0-1: 0 at {@link RECOVERY_PRESSURE}, 1/6 at the
 * threshold (pressure 1), 1 at twice the threshold. Only read while the guard is overloaded.
 */
export function overloadLevel(pressure: number): number {
  const level = (pressure - RECOVERY_PRESSURE) / (FULL_PRESSURE - RECOVERY_PRESSURE);
  return level <= 0 ? 0 : level >= 1 ? 1 : level;
}

/**
 * The chance that a new call of `rank` is refused at `level`: gradually, lowest class first.
 * Sheddable calls from the first moment (1/3 at the threshold) to all of them at level 0.5
 * (1.4× the threshold); standard calls from there on to all at level 1 (2× the threshold);
 * critical calls never: they are what the shedding keeps room for, and their lanes still bound
 * them (a ceiling in `priority` decides who may send them).
 */
export function refusalProbability(level: number, rank: PriorityRank): number {
  switch (rank) {
    case 0:
      return 0;
    case 2:
      return clampUnit(level / 0.5);
    default:
      return clampUnit((level - 0.5) / 0.5);
  }
}

function clampUnit(value: number): number {
  return value <= 0 ? 0 : value >= 1 ? 1 : value;
}

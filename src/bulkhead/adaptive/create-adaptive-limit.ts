import type { Random } from '../../common';
import type { AdaptiveLimit } from './adaptive-limit';
import type { AdaptiveLimitSettings } from './adaptive-settings';
import { AimdLimit } from './aimd-limit';
import { Gradient2Limit } from './gradient2-limit';
import { VegasLimit } from './vegas-limit';

/**
 * The limit `settings` name, starting at `initial` (held within its bounds). Throws a
 * RangeError naming the lane for bounds it cannot run with.
 */
export function createAdaptiveLimit(
  lane: string,
  settings: AdaptiveLimitSettings,
  initial: number,
  random: Random,
): AdaptiveLimit {
  const { min, max } = settings;
  if (!Number.isSafeInteger(min) || min < 1) {
    throw new RangeError(`lane '${lane}': adaptive.min must be an integer of at least 1`);
  }
  if (!Number.isSafeInteger(max) || max < min) {
    throw new RangeError(`lane '${lane}': adaptive.max must be an integer of at least adaptive.min`);
  }
  switch (settings.algorithm) {
    case 'gradient2':
      return new Gradient2Limit(settings, initial);
    case 'vegas':
      return new VegasLimit(settings, initial, random);
    case 'aimd':
      return new AimdLimit(settings, initial);
  }
}

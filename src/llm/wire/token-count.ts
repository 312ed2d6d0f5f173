import { z } from 'zod';

/** A count of tokens as a provider may report it: a whole number, at least 0, exactly representable. */
export const tokenCount = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

import { z } from 'zod';

/**
 * A count of tokens in a provider's usage, as the readers take it: any number. What it says is the
 * account's to judge (a count that is negative, fractional, not finite or past what the request
 * could produce is charged within the attempt's hold, and counted): an answer whose usage is wrong
 * is still an answer, and refusing it would fail an attempt the provider bills all the same.
 */
export const tokenCount = z.number();

import { z } from 'zod';
import { bool } from '../common';

/** The `audit` section of the config file (docs/configuration.md): tool calls' audit lines. */
export const auditSchema = z.strictObject({
  /** Every tool's calls get an audit line, but a tool's own `audit: false`. */
  toolCalls: bool().default(false),
  /**
   * The HMAC key of the arguments' digest (`${BULKHEAD_AUDIT_KEY}`); empty or left out: a plain
   * SHA-256. At least 16 characters: a short key is guessed as easily as the arguments.
   */
  argumentsKey: z
    .union([z.literal(''), z.string().min(16, { error: 'must be at least 16 characters, or empty for none' })], {
      error: 'must be a string',
    })
    .optional(),
});

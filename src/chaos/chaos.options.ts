import { z } from 'zod';
import { bool } from '../common';

/**
 * The switch of every chaos setting (the settings themselves are the features': a tool's and an
 * LLM target's `chaos`). Off unless set; `true` is refused unless the environment variable
 * BULKHEAD_ALLOW_CHAOS is `true` (src/config/cross-references.ts), so a staging file copied to
 * production cannot inject failures there.
 */
export const chaosSchema = z.strictObject({ enabled: bool().default(false) }).prefault({});

/** As the module reads them: every default filled in. */
export type ChaosOptions = z.output<typeof chaosSchema>;

import { z } from 'zod';
import { httpUrl, intIn, oneOf } from '../../../common';
import { headersOf, inputSchema, MiB, RESERVED_HEADERS, toolCommon, toolDefaults } from '../tool-entry.options';

/** A tool that POSTs its arguments as JSON to a fixed URL (`kind: http`). */
export const httpToolSchema = z.strictObject({
  ...toolCommon,
  ...toolDefaults,
  kind: z.literal('http'),
  url: httpUrl(),
  method: oneOf(['POST', 'PUT', 'PATCH']).default('POST'),
  headers: headersOf(RESERVED_HEADERS).optional(),
  maxResponseBytes: intIn(1, 64 * MiB).default(MiB),
  inputSchema: inputSchema.optional(),
});

export type HttpToolConfig = z.output<typeof httpToolSchema>;

import { z } from 'zod';

const indicators = z.record(z.string(), z.looseObject({ status: z.string() }));

/** `GET /health/live` and `/health/ready` when they pass (@nestjs/terminus's answer). */
export const healthAnswerSchema = z.strictObject({
  status: z.literal('ok'),
  info: indicators.optional(),
  error: indicators.optional(),
  details: indicators,
});

/** Prometheus text exposition, `GET /metrics`. */
export const metricsTextSchema = z.string().meta({ description: 'Prometheus text exposition format 0.0.4.' });

/** `GET /openapi.json`: this document. */
export const openApiDocumentSchema = z
  .looseObject({ openapi: z.string(), info: z.looseObject({}), paths: z.looseObject({}) })
  .meta({ description: 'An OpenAPI 3.1 document.' });

/** `GET /docs`: the page that shows the document. */
export const docsPageSchema = z.string().meta({ description: 'HTML; its scripts and styles are served under /docs.' });

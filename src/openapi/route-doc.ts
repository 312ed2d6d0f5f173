import type { z } from 'zod';
import type { RequestSchemaName, ResponseSchemaName } from './components';
import type { HeaderDoc, ParameterDoc } from './headers';

/** The switches of the service's routes (`routes` of BulkheadModule); `docs` is this module's. */
export type RouteGroup =
  'tools' | 'llm' | 'mcp' | 'lanes' | 'circuits' | 'events' | 'admin' | 'metrics' | 'health' | 'docs';

/** How a caller proves who it is: an API key, the admin token, or nothing. */
export type RouteAuth = 'apiKey' | 'admin' | 'none';

/** A body: a named component, or a schema shown in place (text answers). */
export type BodySchema<Name extends string> = Name | z.ZodType;

/** One route of the service, as the document shows it. */
export interface RouteDoc {
  /** The switch that mounts it. */
  group: RouteGroup;
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI's form: `/v1/tools/{toolId}/invoke`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  auth: RouteAuth;
  parameters?: ParameterDoc[];
  body?: { schema: RequestSchemaName; required: boolean; description?: string };
  /** The success answer, `200`, by media type. */
  answer: {
    description: string;
    content: Record<string, BodySchema<ResponseSchemaName>>;
    headers?: Record<string, HeaderDoc>;
  };
  /** The statuses the route's failures come with, each with the error envelope of its kinds. */
  errors: readonly number[];
  /** Its failures are Anthropic's shape (`AnthropicError`) rather than the envelope. */
  anthropicErrors?: boolean;
}

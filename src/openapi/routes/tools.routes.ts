import { INVOKE_PARAMETERS, CALL_ID_HEADER, CALL_ID_PARAMETER, pathName, RATE_LIMIT_HEADERS } from '../headers';
import type { RouteDoc } from '../route-doc';

/** `POST /v1/tools/{toolId}/invoke` and `POST /v1/tools/batch`. */
export const TOOL_ROUTES: RouteDoc[] = [
  {
    group: 'tools',
    method: 'post',
    path: '/v1/tools/{toolId}/invoke',
    operationId: 'invokeTool',
    tag: 'tools',
    summary: 'Call one tool through the whole pipeline',
    description:
      'Authenticate, route by containment, validate, rate limit, reserve the budget, idempotency, breaker, lane, ' +
      'attempts with retries (docs/http-contract.md section 5). A refusal at any step leaves no trace in the steps ' +
      'after it.',
    auth: 'apiKey',
    parameters: [pathName('toolId', 'A tool of the registry.'), ...INVOKE_PARAMETERS],
    body: { schema: 'InvokeRequest', required: false, description: 'No body, or `null`, means `{}` too.' },
    answer: {
      description: "The tool's answer.",
      content: { 'application/json': 'ToolCallSuccess' },
      headers: { 'x-call-id': CALL_ID_HEADER, ...RATE_LIMIT_HEADERS },
    },
    errors: [400, 401, 402, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504],
  },
  {
    group: 'tools',
    method: 'post',
    path: '/v1/tools/batch',
    operationId: 'invokeBatch',
    tag: 'tools',
    summary: 'Call several tools, each through the whole pipeline',
    description:
      'At most `concurrency` calls in flight. Each entry is answered in its place with its success body or its ' +
      'own error envelope (an entry that does not match `BatchCall` fails alone); only a malformed batch as a ' +
      'whole is refused. Entries carry no rate-limit headers.',
    auth: 'apiKey',
    parameters: [CALL_ID_PARAMETER],
    body: { schema: 'BatchRequest', required: true },
    answer: {
      description: 'One result per call, in call order.',
      content: { 'application/json': 'BatchResponse' },
      headers: { 'x-call-id': CALL_ID_HEADER },
    },
    errors: [400, 401, 403, 413, 500, 503],
  },
];

import { z } from 'zod';
import type { RouteDoc } from '../route-doc';

/** `?limit=` of the events routes, a tenant's and the operators'. */
export const EVENTS_LIMIT = {
  name: 'limit',
  in: 'query' as const,
  description: 'How many events, newest first taken (the ledger keeps 1000). Default 100.',
  schema: z.int().min(1).max(1000),
};

/** What an API-key caller may read: the lanes and circuits of what it may use, its own events. */
export const INTROSPECTION_ROUTES: RouteDoc[] = [
  {
    group: 'lanes',
    method: 'get',
    path: '/v1/lanes',
    operationId: 'listLanes',
    tag: 'introspection',
    summary: 'The lanes of what the caller may use: running, waiting, limits and peak',
    auth: 'apiKey',
    answer: { description: 'The lanes by name.', content: { 'application/json': 'Lanes' } },
    errors: [401, 403, 500],
  },
  {
    group: 'circuits',
    method: 'get',
    path: '/v1/circuits',
    operationId: 'listCircuits',
    tag: 'introspection',
    summary: 'The breakers of what the caller may use: state, rolling-window counts, whether it is refused alone',
    description:
      'A breaker of a route kept for other tenants (`llm.routes.<name>.tenants`), or of a `containment: deny` tool ' +
      'while the caller is contained, is left out; `tenantsOpen` holds the caller alone, when it is refused on its ' +
      "own. Operators' view: `GET /v1/admin/circuits`.",
    auth: 'apiKey',
    answer: { description: 'The breakers by name.', content: { 'application/json': 'Circuits' } },
    errors: [401, 403, 500],
  },
  {
    group: 'events',
    method: 'get',
    path: '/v1/events',
    operationId: 'listEvents',
    tag: 'introspection',
    summary: "The newest calls of the caller's own tenant, newest last, and transitions of the breakers it sees",
    description:
      'Events of no tenant (breaker transitions, chaos on an LLM target) are shown to those who may use what they ' +
      "are about, as `GET /v1/circuits` shows breakers. Operators' view: `GET /v1/admin/events`.",
    auth: 'apiKey',
    parameters: [EVENTS_LIMIT],
    answer: { description: 'Fixed fields only.', content: { 'application/json': 'Events' } },
    errors: [400, 401, 403, 500],
  },
];

import { z } from 'zod';
import type { RouteDoc } from '../route-doc';

/** What an API-key caller may read: lanes, circuits, its own events. */
export const INTROSPECTION_ROUTES: RouteDoc[] = [
  {
    group: 'lanes',
    method: 'get',
    path: '/v1/lanes',
    operationId: 'listLanes',
    tag: 'introspection',
    summary: 'Every lane: running, waiting, limits and peak',
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
    summary: 'Every breaker: state, rolling-window counts and tenants refused on their own',
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
    summary: "The newest calls of the caller's own tenant, newest last, and breaker transitions",
    auth: 'apiKey',
    parameters: [
      {
        name: 'limit',
        in: 'query',
        description: 'How many events, newest first taken (the ledger keeps 1000). Default 100.',
        schema: z.int().min(1).max(1000),
      },
    ],
    answer: { description: 'Fixed fields only.', content: { 'application/json': 'Events' } },
    errors: [400, 401, 403, 500],
  },
];

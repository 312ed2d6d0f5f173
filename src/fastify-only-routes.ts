import type { Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { BulkheadRoutes } from './bulkhead-module.options';

/**
 * Bulkhead's route groups that still write to Fastify's reply themselves (streams taken with
 * `hijack()`, `reply.code().send()`), with what they mount: on another platform they would
 * half-work, so they are refused at start instead.
 */
const FASTIFY_ONLY: ReadonlyArray<[group: keyof BulkheadRoutes, mounts: string]> = [
  ['llm', '/v1/chat/completions, /v1/messages, /v1/responses, /v1/models'],
  ['mcp', '/mcp'],
];

/**
 * The line that stops an app on another platform than Fastify that mounts a Fastify-only group,
 * naming the switches to set; undefined when there is nothing to say.
 */
export function fastifyOnlyRoutesProblem(platform: string, routes: Required<BulkheadRoutes>): string | undefined {
  if (platform === 'fastify') return undefined;
  const mounted = FASTIFY_ONLY.filter(([group]) => routes[group]);
  if (mounted.length === 0) return undefined;
  const switches = mounted.map(([group]) => `${group}: false`).join(', ');
  const paths = mounted.map(([, mounts]) => mounts).join(', ');
  return (
    `BulkheadModule: ${paths} run on @nestjs/platform-fastify only, and this app runs on ${platform}: ` +
    `set routes: { ${switches} } in BulkheadModule.forRoot or forRootAsync (LlmGateway, the tools and every other route work on ${platform})`
  );
}

/** Checks, once the app's HTTP adapter is known, that no Fastify-only group is mounted on another platform. */
export function fastifyOnlyRoutesCheck(routes: Required<BulkheadRoutes>): Provider {
  return {
    provide: Symbol('BULKHEAD_FASTIFY_ONLY_ROUTES'),
    inject: [HttpAdapterHost],
    useFactory: (adapterHost: HttpAdapterHost) => ({
      // Not in the factory: a testing module builds its providers before the app has its adapter.
      onModuleInit: () => {
        const adapter = adapterHost.httpAdapter;
        const problem = adapter ? fastifyOnlyRoutesProblem(adapter.getType(), routes) : undefined;
        if (problem) throw new Error(problem);
      },
    }),
  };
}

import { fastifyOnlyRoutesProblem } from './fastify-only-routes';
import type { BulkheadRoutes } from './bulkhead-module.options';

const ALL: Required<BulkheadRoutes> = {
  tools: true,
  llm: true,
  mcp: true,
  lanes: true,
  circuits: true,
  events: true,
  admin: true,
  metrics: true,
  health: true,
  docs: true,
};

describe('fastifyOnlyRoutesProblem', () => {
  it('says nothing on Fastify, whatever is mounted', () => {
    expect(fastifyOnlyRoutesProblem('fastify', ALL)).toBeUndefined();
  });

  it('names, on another platform, the switches of exactly the Fastify-only groups still mounted', () => {
    expect(fastifyOnlyRoutesProblem('express', ALL)).toMatch(
      /this app runs on express: set routes: \{ llm: false, mcp: false \}/,
    );
    expect(fastifyOnlyRoutesProblem('express', { ...ALL, llm: false })).toMatch(
      /^BulkheadModule: \/mcp run on .* set routes: \{ mcp: false \}/,
    );
    expect(fastifyOnlyRoutesProblem('express', { ...ALL, mcp: false })).toMatch(/set routes: \{ llm: false \}/);
  });

  it('says nothing on another platform once both are off', () => {
    expect(fastifyOnlyRoutesProblem('express', { ...ALL, llm: false, mcp: false })).toBeUndefined();
  });
});

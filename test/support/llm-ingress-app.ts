import { createTestApp, type TestApp } from './create-app';
import type { PlatformName } from '../../src/common/nest';
import { testTenant } from './tenants';

/** A tenant with no limit; one with one request a minute; one whose budget covers nothing. */
export const ACME = testTenant('acme');
export const SLOW = testTenant('slow');
export const POOR = testTenant('poor');

/** A target that calls `get_weather` for Paris, then (when given) answers `then`. */
const weatherCaller = (model: string, then?: string) => ({
  lane: 'llm',
  targets: [
    {
      provider: 'fake',
      model,
      script: [
        { toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } },
        ...(then === undefined ? [] : [{ text: then }]),
      ],
    },
  ],
});

/**
 * Offline routes each ingress is tried on: `echo` answers the last user text; `cached` too, from
 * the exact cache when asked again; `tools` calls the tool, then answers; `tools-streamed` calls
 * it (a route of its own, so its script starts at the call); `failover`'s first target answers
 * 503; `cut` stops after its first content.
 */
const ROUTES = {
  echo: { lane: 'llm', targets: [{ provider: 'fake', model: 'echo-1' }] },
  cached: { lane: 'llm', cache: true, targets: [{ provider: 'fake', model: 'cached-1' }] },
  tools: weatherCaller('tools-1', 'Sunny in Paris.'),
  'tools-streamed': weatherCaller('tools-2'),
  failover: {
    lane: 'llm',
    targets: [
      { provider: 'fake', model: 'down-1', script: [{ status: 503 }] },
      { provider: 'fake', model: 'up-1' },
    ],
  },
  cut: { lane: 'llm', targets: [{ provider: 'fake', model: 'cut-1', script: [{ cutAfterChunks: 1 }] }] },
};
const MODELS = ['echo-1', 'cached-1', 'tools-1', 'tools-2', 'down-1', 'up-1', 'cut-1'];

/** The service with those routes, priced (so the budget applies), for the three tenants, on `platform`. */
export function startIngressApp(platform: PlatformName = 'fastify'): Promise<TestApp> {
  return createTestApp(
    {
      auth: { allowAnonymous: false, apiKeys: [ACME.apiKey, POOR.apiKey, SLOW.apiKey] },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      rateLimits: { tenants: { slow: { rpm: 1 } } },
      budgets: { tenants: { poor: 0.000001 } },
      llm: {
        routes: ROUTES,
        prices: Object.fromEntries(
          MODELS.map((model) => [`fake/${model}`, { inputPerMTokUsd: 1, outputPerMTokUsd: 1 }]),
        ),
      },
    },
    { platform },
  );
}

/** What `promise` rejected with; undefined if it resolved. */
export const errorOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(() => undefined).catch((error: unknown) => error);

import type { Provider } from '@nestjs/common';
import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The app's own prom-client registry, injectable by its class. Not the library's global one,
 * so several apps in one process (as in tests) never collide.
 */
export class MetricsRegistry extends Registry {}

export const metricsRegistryProvider: Provider = {
  provide: MetricsRegistry,
  useFactory: () => {
    const registry = new MetricsRegistry();
    collectDefaultMetrics({ register: registry });
    return registry;
  },
};

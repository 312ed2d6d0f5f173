import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { AdaptiveLimitSettings } from './adaptive';

export interface LaneSettings {
  /** Calls running at once, 1..4096; an adaptive lane's starting limit. */
  concurrency: number;
  /** Calls waiting for a slot, 0..100000; 0 = start now or refuse. */
  queueCapacity: number;
  /** Longest wait for a slot. @default 30000 */
  queueTtlMs?: number;
  /** One tenant's share of the queue. @default queueCapacity */
  maxQueuedPerTenant?: number;
  /** A limit that follows the dependency's latency, within `min` and `max`; fixed at `concurrency` otherwise. */
  adaptive?: AdaptiveLimitSettings;
}

export interface LanesModuleOptions {
  /** Lanes by name, as in the `lanes` section of the config file. */
  lanes: Record<string, LaneSettings>;
}

export const { ConfigurableModuleClass: LanesConfigurableModule, MODULE_OPTIONS_TOKEN: LANES_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<LanesModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();

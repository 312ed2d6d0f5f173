import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../store';
import { SystemClock } from '../common';
import { REDIS, REDIS_KEYS, type RedisKeys, sharedStoreProvider } from '../store';
import { ClusterNodeSubscriber } from './cluster-node-subscriber';
import { ContainmentCache } from './containment-cache';
import { CONTAINMENT_MODULE_OPTIONS, type ContainmentModuleOptions } from './containment.module-definition';
import { ContainmentStore } from './containment.store';
import { MemoryContainmentStore } from './memory-containment.store';
import { containmentChannel, RedisContainmentStore } from './redis-containment.store';
import { RedisInvalidations, SUBSCRIBER_CONNECTION_OPTIONS } from './redis-invalidations';

/**
 * The containment snapshots' invalidations (a subscriber connection of their own, duplicated from
 * the decision connection) that keep the Redis containment store's cache live; null with the
 * memory store or an app's own containment store.
 */
const CONTAINMENT_INVALIDATIONS = Symbol('CONTAINMENT_INVALIDATIONS');

/** Closes the containment invalidations' subscriber connection (only that one: it is always ours). */
@Injectable()
class InvalidationsCloser implements OnApplicationShutdown {
  constructor(@Inject(CONTAINMENT_INVALIDATIONS) private readonly invalidations: RedisInvalidations | null) {}

  onApplicationShutdown(): void {
    this.invalidations?.close();
  }
}

/** The ContainmentStore (the app's own, Redis with its cache kept live, or memory) and what closes it. */
export const containmentStoreProviders: Provider[] = [
  {
    provide: CONTAINMENT_INVALIDATIONS,
    useFactory: (
      options: ContainmentModuleOptions,
      connection: RedisClient | null,
      keys: RedisKeys,
    ): RedisInvalidations | null => {
      if (options.customStore || !connection) return null;
      const subscriber =
        connection instanceof Cluster
          ? new ClusterNodeSubscriber(connection)
          : connection.duplicate(SUBSCRIBER_CONNECTION_OPTIONS);
      // Pings on real time whatever clock the app runs on: a dead link is a real-time matter.
      return new RedisInvalidations(subscriber, new ContainmentCache(), {
        channel: containmentChannel(keys),
        clock: new SystemClock(),
      });
    },
    inject: [CONTAINMENT_MODULE_OPTIONS, REDIS, REDIS_KEYS],
  },
  InvalidationsCloser,
  sharedStoreProvider<ContainmentStore, ContainmentModuleOptions>(
    ContainmentStore,
    CONTAINMENT_MODULE_OPTIONS,
    {
      own: (options) => options.customStore,
      memory: () => new MemoryContainmentStore(),
      redis: ({ connection, keys }, _options, invalidations) =>
        new RedisContainmentStore(connection, keys, (invalidations as RedisInvalidations | null)?.cache),
    },
    [CONTAINMENT_INVALIDATIONS],
  ),
];

import type { DynamicModule, Type } from '@nestjs/common';

/** What every Bulkhead module takes besides its options, in `forRoot` and `forRootAsync` alike. */
export interface ModuleExtras {
  /**
   * Its providers can be injected anywhere in the app, as with @nestjs/config's `isGlobal`.
   * The modules that build on it (route policies, dispatch, metrics) find it that way.
   * @default true
   */
  isGlobal?: boolean;
  /** Mounts its HTTP routes (`/v1/lanes`, `/v1/circuits`, ...); false leaves them out. @default true */
  routes?: boolean;
}

export const DEFAULT_MODULE_EXTRAS: Required<ModuleExtras> = { isGlobal: true, routes: true };

/** A module class whose routes are optional: its controllers, not listed in its `@Module()`. */
export interface WithRoutes {
  readonly routes?: readonly Type[];
}

/**
 * The `setExtras` transform of a module whose routes are optional. The controllers are read
 * from the module class's static `routes` (not imported by the definition file, whose options
 * token those controllers' services inject), so that `routes: false` can leave them out.
 */
export function withExtras(definition: DynamicModule, extras: ModuleExtras): DynamicModule {
  return {
    ...definition,
    global: extras.isGlobal ?? true,
    controllers: extras.routes === false ? [] : [...((definition.module as WithRoutes).routes ?? [])],
  };
}

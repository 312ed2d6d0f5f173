import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminGuard } from '../auth';
import { CommonModule } from '../common/nest';
import { ContainmentConfigurableModule } from './containment.module-definition';
import { ContainmentAdminController } from './containment-admin.controller';
import { containmentStoreProviders } from './containment-store.providers';
import { ContainmentStore } from './containment.store';
import { ContainmentRouter } from './containment-router.service';
import { ContainmentRoutingGuard } from './containment-routing.guard';
import { HttpPools } from './http-pools.service';
import { TenantHttpClient } from './tenant-http-client';

/**
 * Containment: every route but those marked `@WithoutTenant()` gets the tenant of the app's
 * TenantResolver (AuthModule) and the pool its containment snapshot gives; the two HTTP pools;
 * `TenantHttpClient`; the admin routes of containment snapshots. The snapshots are in Redis
 * when StoreModule holds a connection (cached, kept live by pub/sub), in memory otherwise.
 */
@Module({
  imports: [CommonModule],
  providers: [
    ...containmentStoreProviders,
    ContainmentRouter,
    HttpPools,
    TenantHttpClient,
    AdminGuard,
    { provide: APP_GUARD, useClass: ContainmentRoutingGuard },
  ],
  exports: [ContainmentStore, ContainmentRouter, HttpPools, TenantHttpClient],
})
export class ContainmentModule extends ContainmentConfigurableModule {
  static readonly routes = [ContainmentAdminController];
}

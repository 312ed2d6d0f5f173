import { Global, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdminGuard, ApiKeyAuthenticator } from '../auth';
import { BULKHEAD_CONFIG, type BulkheadConfig } from '../config';
import { ContainmentAdminController } from './containment-admin.controller';
import { ContainmentRouter } from './containment-router.service';
import { ContainmentRoutingGuard } from './containment-routing.guard';
import { HttpPools } from './http-pools.service';
import { TenantHttpClient } from './tenant-http-client';

/**
 * Identity and containment: every route but health, metrics and admin gets an authenticated
 * tenant and the pool its containment snapshot gives; the two HTTP pools; `TenantHttpClient`;
 * the admin routes of containment snapshots.
 */
@Global()
@Module({
  controllers: [ContainmentAdminController],
  providers: [
    {
      provide: ApiKeyAuthenticator,
      useFactory: (config: BulkheadConfig) => new ApiKeyAuthenticator(config.auth),
      inject: [BULKHEAD_CONFIG],
    },
    ContainmentRouter,
    HttpPools,
    TenantHttpClient,
    AdminGuard,
    { provide: APP_GUARD, useClass: ContainmentRoutingGuard },
  ],
  exports: [ApiKeyAuthenticator, ContainmentRouter, HttpPools, TenantHttpClient],
})
export class ContainmentModule {}

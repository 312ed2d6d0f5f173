import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import { ApiKeyTenantResolver } from './api-key-tenant-resolver';
import { TenantResolver } from './tenant-resolver';

export interface AuthModuleOptions {
  /** SHA-256 (hex) of each API key and its tenant. @default [] */
  apiKeys?: ReadonlyArray<{ sha256: string; tenant: string }>;
  /** Callers without a key are tenant `anonymous` (always isolated). @default false */
  allowAnonymous?: boolean;
  /** The admin routes' bearer token, at least 16 characters; unset, admin routes answer 404. */
  adminToken?: string;
  /** Web pages that may call without a key, beside loopback ones (`AnonymousPages`). @default [] */
  allowedOrigins?: readonly string[];
  /** Host names the service is reached by, beside loopback ones; checked for anonymous callers only. @default [] */
  allowedHosts?: readonly string[];
}

export interface AuthModuleExtras {
  /** @default true */
  isGlobal?: boolean;
  /** A company's own identity instead of the API keys: a class Nest builds with its injections. */
  tenantResolver?: Type<TenantResolver>;
}

export const { ConfigurableModuleClass: AuthConfigurableModule, MODULE_OPTIONS_TOKEN: AUTH_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<AuthModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras<AuthModuleExtras>({ isGlobal: true }, (definition, extras) => ({
      ...definition,
      global: extras.isGlobal ?? true,
      providers: [
        ...(definition.providers ?? []),
        { provide: TenantResolver, useClass: extras.tenantResolver ?? ApiKeyTenantResolver },
      ],
    }))
    .build();

import { ConfigurableModuleBuilder, type Type } from '@nestjs/common';
import type { AuthOptions } from './auth.options';
import { ApiKeyTenantResolver } from './api-key-tenant-resolver';
import { TenantResolver } from './tenant-resolver';

/** What the module reads: the config file's `auth` section, each key optional where it has a default. */
export type AuthModuleOptions = AuthOptions;

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

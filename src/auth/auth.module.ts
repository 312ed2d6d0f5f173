import { Module } from '@nestjs/common';
import { AnonymousPages } from './anonymous-pages';
import { ApiKeyAuthenticator } from './api-key-authenticator';
import { ADMIN_TOKEN, AdminGuard } from '../common/nest';
import { AUTH_MODULE_OPTIONS, AuthConfigurableModule, type AuthModuleOptions } from './auth.module-definition';
import { TenantResolver } from './tenant-resolver';

/**
 * Identity: the {@link TenantResolver} every tenant-taking route uses (API keys by default, or
 * the app's own), and the admin token of the admin routes. `AuthModule.forRoot({ apiKeys,
 * allowAnonymous, adminToken })`; `tenantResolver` beside the options replaces the API keys.
 */
@Module({
  providers: [
    {
      provide: ApiKeyAuthenticator,
      useFactory: (options: AuthModuleOptions) =>
        new ApiKeyAuthenticator({ apiKeys: options.apiKeys ?? [], allowAnonymous: options.allowAnonymous ?? false }),
      inject: [AUTH_MODULE_OPTIONS],
    },
    {
      provide: AnonymousPages,
      useFactory: (options: AuthModuleOptions) => new AnonymousPages(options),
      inject: [AUTH_MODULE_OPTIONS],
    },
    { provide: ADMIN_TOKEN, useFactory: adminTokenOf, inject: [AUTH_MODULE_OPTIONS] },
    AdminGuard,
  ],
  exports: [ApiKeyAuthenticator, AnonymousPages, TenantResolver, ADMIN_TOKEN, AdminGuard],
})
export class AuthModule extends AuthConfigurableModule {}

/** The admin token, or null when admin routes are off; a short one is refused at start. */
function adminTokenOf(options: AuthModuleOptions): string | null {
  const token = options.adminToken;
  if (token === undefined || token === '') return null;
  if (token.length < 16) throw new RangeError('auth: adminToken must be at least 16 characters');
  return token;
}

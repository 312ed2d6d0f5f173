import { Inject, Injectable } from '@nestjs/common';
import type { PlatformRequest } from '../common/nest';
import { ApiKeyAuthenticator, type Caller } from './api-key-authenticator';
import { TenantResolver } from './tenant-resolver';

/**
 * The default {@link TenantResolver}: the key of `Authorization: Bearer <key>` or `x-api-key: <key>`
 * against `auth.apiKeys`.
 */
@Injectable()
export class ApiKeyTenantResolver extends TenantResolver {
  constructor(@Inject(ApiKeyAuthenticator) private readonly authenticator: ApiKeyAuthenticator) {
    super();
  }

  resolve(request: PlatformRequest): Caller {
    return this.authenticator.authenticate(request.headers.authorization, request.headers['x-api-key']);
  }
}

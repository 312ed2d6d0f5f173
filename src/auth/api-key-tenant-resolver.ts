import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { AnonymousPages } from './anonymous-pages';
import { ApiKeyAuthenticator, type Caller } from './api-key-authenticator';
import { TenantResolver } from './tenant-resolver';

/**
 * The default {@link TenantResolver}: the key of `Authorization: Bearer <key>` or `x-api-key: <key>`
 * against `auth.apiKeys`; a caller without one (`anonymous`, where allowed) only from a web page
 * {@link AnonymousPages} allows, or from no page at all.
 */
@Injectable()
export class ApiKeyTenantResolver extends TenantResolver {
  constructor(
    @Inject(ApiKeyAuthenticator) private readonly authenticator: ApiKeyAuthenticator,
    @Inject(AnonymousPages) private readonly anonymousPages: AnonymousPages,
  ) {
    super();
  }

  resolve(request: FastifyRequest): Caller {
    const caller = this.authenticator.authenticate(request.headers.authorization, request.headers['x-api-key']);
    if (!caller.known) this.anonymousPages.check(request);
    return caller;
  }
}

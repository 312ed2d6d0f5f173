import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, Optional } from '@nestjs/common';
import { ResilienceError } from '../errors/resilience-error';
import type { PlatformRequest } from './platform';

/** Injection token of the admin routes' bearer token (AuthModule provides it). */
export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

/**
 * Admits a request to an admin route only with `Authorization: Bearer <auth.adminToken>`,
 * compared in constant time. With no admin token configured the admin routes do not exist:
 * they answer 404 exactly like an unknown route. `x-api-key` is not read here: it carries an
 * API key (a tenant's), and the admin token is no API key; an operator's tool sends a bearer.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;

  // Optional: a module with admin routes imported without AuthModule has no admin token, so
  // its admin routes do not exist, rather than failing to boot.
  constructor(@Optional() @Inject(ADMIN_TOKEN) token?: string | null) {
    this.tokenDigest = token ? sha256(token) : undefined;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.tokenDigest) throw new ResilienceError('not_found', 'no such route');
    const header = context.switchToHttp().getRequest<PlatformRequest>().headers.authorization;
    const presented = typeof header === 'string' ? /^Bearer ([\x21-\x7e]+)$/i.exec(header)?.[1] : undefined;
    // Hashing both sides first makes the comparison constant-time whatever the lengths.
    if (presented === undefined || !timingSafeEqual(sha256(presented), this.tokenDigest)) {
      throw new ResilienceError('unauthorized', 'admin routes need the admin token');
    }
    return true;
  }
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

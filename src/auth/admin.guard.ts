import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ResilienceError } from '../common';
import { BULKHEAD_CONFIG, type BulkheadConfig } from '../config';

/**
 * Admits a request to an admin route only with `Authorization: Bearer <auth.adminToken>`,
 * compared in constant time. With no admin token configured the admin routes do not exist:
 * they answer 404 exactly like an unknown route.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  private readonly tokenDigest: Buffer | undefined;

  constructor(@Inject(BULKHEAD_CONFIG) config: BulkheadConfig) {
    const token = config.auth.adminToken;
    this.tokenDigest = token === undefined ? undefined : sha256(token);
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.tokenDigest) throw new ResilienceError('not_found', 'no such route');
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization;
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

import { Global, Module } from '@nestjs/common';
import { RateLimiter } from './rate-limiter.service';

/** Per-tenant rate limits (step 4 of the pipeline); the store comes from the store module. */
@Global()
@Module({ providers: [RateLimiter], exports: [RateLimiter] })
export class RateLimitModule {}

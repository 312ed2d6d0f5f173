import { Module } from '@nestjs/common';
import { CommonModule } from '../common/nest';
import { RateLimitConfigurableModule } from './rate-limit.module-definition';
import { RateLimiter } from './rate-limiter.service';

/** Per-tenant rate limits (step 4 of the pipeline); the RateLimitStore comes from StoreModule. */
@Module({ imports: [CommonModule], providers: [RateLimiter], exports: [RateLimiter] })
export class RateLimitModule extends RateLimitConfigurableModule {}

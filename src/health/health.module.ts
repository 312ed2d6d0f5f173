import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { LifecycleIndicator } from './readiness.indicator';
import { RedisIndicator } from './redis.indicator';

/** `/health/live` and `/health/ready` for Kubernetes probes. */
@Module({
  // Readiness fails on purpose during every shutdown: that is not an error worth logging.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [LifecycleIndicator, RedisIndicator],
})
export class HealthModule {}

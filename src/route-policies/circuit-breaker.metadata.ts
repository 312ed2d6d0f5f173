import { Reflector } from '@nestjs/core';

/** The route metadata behind `@CircuitBreaker`: the breaker's name. */
export const CircuitBreakerMetadata = Reflector.createDecorator<string>();

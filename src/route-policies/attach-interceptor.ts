import type { NestInterceptor, Type } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';

type Interceptor = Type<NestInterceptor>;

/**
 * Adds `interceptor` to a class or a method at most once per route. Nest runs class and
 * method interceptors one after the other, so a class decorated as a whole and a method
 * decorated again would otherwise run it twice (and take two lane slots). Class decorators
 * run after method decorators, so the class removes it from its own methods.
 */
export function attachInterceptorOnce(
  interceptor: Interceptor,
  target: object,
  descriptor?: TypedPropertyDescriptor<unknown>,
): void {
  if (descriptor) {
    addOnce(interceptor, descriptor.value as object);
    return;
  }
  addOnce(interceptor, target);
  const prototype = (target as { prototype: Record<string, unknown> }).prototype;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const method = Object.getOwnPropertyDescriptor(prototype, name)?.value;
    if (typeof method !== 'function' || name === 'constructor') continue;
    const attached: unknown[] | undefined = Reflect.getMetadata(INTERCEPTORS_METADATA, method);
    if (attached?.includes(interceptor)) {
      Reflect.defineMetadata(
        INTERCEPTORS_METADATA,
        attached.filter((item) => item !== interceptor),
        method,
      );
    }
  }
}

function addOnce(interceptor: Interceptor, holder: object): void {
  const attached: unknown[] = Reflect.getMetadata(INTERCEPTORS_METADATA, holder) ?? [];
  if (!attached.includes(interceptor))
    Reflect.defineMetadata(INTERCEPTORS_METADATA, [...attached, interceptor], holder);
}

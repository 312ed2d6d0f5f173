import { ServerResponse } from 'node:http';
import type { HttpAdapterHost } from '@nestjs/core';
import { EXPRESS_PLATFORM } from './express-platform';
import { FASTIFY_PLATFORM } from './fastify-platform';
import type { HttpPlatform, PlatformReply } from './http-platform';

const PLATFORMS: Readonly<Record<string, HttpPlatform>> = { fastify: FASTIFY_PLATFORM, express: EXPRESS_PLATFORM };

/**
 * The platform of an HTTP adapter (`getType()`), or an error naming what runs instead: Bulkhead's
 * HTTP parts run on `@nestjs/platform-fastify` and `@nestjs/platform-express` only.
 */
export function httpPlatformNamed(type: string): HttpPlatform {
  const platform = Object.hasOwn(PLATFORMS, type) ? PLATFORMS[type] : undefined;
  if (!platform) {
    throw new Error(
      `Bulkhead's HTTP routes, guards and filter run on @nestjs/platform-fastify or @nestjs/platform-express; this app's HTTP adapter is '${type}'`,
    );
  }
  return platform;
}

/**
 * The platform of the running app, read from Nest's `HttpAdapterHost` on first use and kept.
 * Not at construction: a testing module builds its providers before the app (and its adapter)
 * exists. Undefined while the app has no HTTP adapter (a module used without HTTP, as
 * `LlmGateway` can be).
 */
export class AppPlatform {
  private platform: HttpPlatform | undefined;

  constructor(private readonly adapterHost: HttpAdapterHost | undefined) {}

  /** The platform, or undefined while there is no HTTP adapter. */
  find(): HttpPlatform | undefined {
    if (this.platform) return this.platform;
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter) return undefined;
    this.platform = httpPlatformNamed(adapter.getType());
    return this.platform;
  }

  /**
   * The platform a request is served on, asked while handling it: the app's, else (a filter or
   * guard built by hand, with no injector) told by the reply itself.
   */
  of(reply: PlatformReply): HttpPlatform {
    return this.find() ?? platformOfReply(reply);
  }
}

/** The platform of a reply by its shape: an Express response is a Node response, a Fastify reply wraps one. */
export function platformOfReply(reply: PlatformReply): HttpPlatform {
  return reply instanceof ServerResponse ? EXPRESS_PLATFORM : FASTIFY_PLATFORM;
}

/**
 * The Node response under a reply of either platform, without asking the app: an Express
 * response is one, a Fastify reply wraps one as `raw`. For code that has no injector (a
 * parameter decorator) or serves both platforms' callers through one function (the call state).
 */
export function nodeResponseOf(reply: PlatformReply): ServerResponse {
  return reply instanceof ServerResponse ? reply : (reply as { raw: ServerResponse }).raw;
}

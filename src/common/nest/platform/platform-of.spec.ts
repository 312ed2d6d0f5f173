import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { EXPRESS_PLATFORM } from './express-platform';
import { FASTIFY_PLATFORM } from './fastify-platform';
import { AppPlatform, httpPlatformNamed, nodeResponseOf, platformOfReply } from './platform-of';

function nodeResponse(): ServerResponse {
  return new ServerResponse(new IncomingMessage(new Socket()));
}

/** The adapter host as Nest's is while the app has an adapter of `type`, or none. */
function adapterHost(type?: string) {
  return { httpAdapter: type === undefined ? undefined : { getType: () => type } } as never;
}

describe('the HTTP platform of an app', () => {
  it("is the adapter's, by getType()", () => {
    expect(httpPlatformNamed('fastify')).toBe(FASTIFY_PLATFORM);
    expect(httpPlatformNamed('express')).toBe(EXPRESS_PLATFORM);
  });

  it('refuses any other adapter, naming it and the two that work', () => {
    expect(() => httpPlatformNamed('koa')).toThrow(
      /run on @nestjs\/platform-fastify or @nestjs\/platform-express; this app's HTTP adapter is 'koa'/,
    );
    expect(() => httpPlatformNamed('constructor')).toThrow(/adapter is 'constructor'/);
  });

  it('is read when first asked, not when made: a testing module gets its adapter after its providers', () => {
    const host = { httpAdapter: undefined } as { httpAdapter?: { getType(): string } };
    const platform = new AppPlatform(host as never);
    expect(platform.find()).toBeUndefined();

    host.httpAdapter = { getType: () => 'express' };

    expect(platform.find()).toBe(EXPRESS_PLATFORM);
  });

  it('is told by the reply when the app has no adapter host (a filter made with new)', () => {
    expect(new AppPlatform(adapterHost()).of(nodeResponse())).toBe(EXPRESS_PLATFORM);
    expect(new AppPlatform(undefined).of({ raw: nodeResponse() })).toBe(FASTIFY_PLATFORM);
    expect(platformOfReply(nodeResponse())).toBe(EXPRESS_PLATFORM);
  });
});

describe('nodeResponseOf', () => {
  it('is an Express response itself, and the raw response a Fastify reply wraps', () => {
    const response = nodeResponse();

    expect(nodeResponseOf(response)).toBe(response);
    expect(nodeResponseOf({ raw: response })).toBe(response);
  });
});

describe('the headers a call sets as it runs', () => {
  it('are the Fastify reply itself: no object made per request', () => {
    const reply = { raw: nodeResponse(), header: () => reply };

    expect(FASTIFY_PLATFORM.headersOf(reply)).toBe(reply);
  });

  it('are set on an Express response until its head is out, and left out after, without a throw', () => {
    const response = nodeResponse();
    const headers = EXPRESS_PLATFORM.headersOf(response);

    headers.header('x-bulkhead-attempts', '1');
    response.writeHead(200);
    headers.header('x-bulkhead-attempts', '2');

    expect(response.getHeader('x-bulkhead-attempts')).toBe('1');
    expect(response.headersSent).toBe(true);
  });
});

import { Injectable, Module, type Type } from '@nestjs/common';
import { LaneRegistry } from '../../src/bulkhead';
import { ResilienceError } from '../../src/common';
import { FakeClock } from '../../src/common/fake-clock';
import { Tool, type ToolArguments, type ToolContext } from '../../src/dispatch';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { expectEnvelope, expectNothingLeaked } from '../support/envelope';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';

const CALL_ID = /^[A-Za-z0-9_-]{1,48}$/;

/** Lanes: `main` for echo, `solo` (1 running, 1 waiting, 1 s queue TTL) and `zero` (no waiting). */
const CONFIG = {
  lanes: {
    main: { concurrency: 2, queueCapacity: 2 },
    solo: { concurrency: 1, queueCapacity: 1, queueTtlMs: 1000 },
    zero: { concurrency: 1, queueCapacity: 0 },
  },
  tools: {
    echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
    solo_echo: { lane: 'solo', kind: 'builtin', builtin: 'echo', timeoutMs: 2000 },
    wait: { lane: 'solo', kind: 'builtin', builtin: 'delay', timeoutMs: 2000 },
    hold: { lane: 'zero', kind: 'builtin', builtin: 'delay', timeoutMs: 60_000 },
  },
};

/** Waits for the abort of its attempt: a handler that only ends when it is told to stop. */
function untilAborted(context: ToolContext): Promise<never> {
  return new Promise((_resolve, reject) => {
    context.signal.addEventListener('abort', () => reject(context.signal.reason as Error), { once: true });
  });
}

@Injectable()
class AcmeTools {
  @Tool('acme.lookup', { lane: 'main' })
  lookup(args: ToolArguments, context: ToolContext) {
    return { args, callId: context.callId, toolId: context.toolId, tenant: context.tenant };
  }

  @Tool('acme.explode', { lane: 'main' })
  explode(): never {
    throw new Error('secret-argument-value');
  }

  @Tool('acme.refuse', { lane: 'main' })
  refuse(): never {
    throw new ResilienceError('schema', 'acme.refuse takes no arguments');
  }

  @Tool('acme.strict', {
    lane: 'main',
    validate: (args) => {
      if (typeof args.id !== 'number') throw new ResilienceError('schema', 'arguments.id must be a number');
    },
  })
  strict(args: ToolArguments) {
    return { id: args.id };
  }

  @Tool('acme.slow', { lane: 'main', timeoutMs: 1000 })
  slow(_args: ToolArguments, context: ToolContext) {
    return untilAborted(context);
  }

  @Tool('acme.configured', { lane: 'main', timeoutMs: 1000 })
  configured(_args: ToolArguments, context: ToolContext) {
    return untilAborted(context);
  }

  @Tool('acme.relaned', { lane: 'main', timeoutMs: 1000 })
  relaned(_args: ToolArguments, context: ToolContext) {
    return untilAborted(context);
  }

  @Tool('acme.void', { lane: 'main' })
  nothing(): void {}

  @Tool('acme.bigint', { lane: 'main' })
  bigint() {
    return { n: BigInt(1) };
  }
}

@Module({ providers: [AcmeTools] })
class AcmeToolsModule {}

describe.each(PLATFORMS)('POST /v1/tools/{toolId}/invoke, on %s', (platform) => {
  let service: TestApp | undefined;
  let clock: FakeClock;

  async function start(
    config: Record<string, unknown> = CONFIG,
    imports: Type[] = [],
  ): Promise<{ url: string; lanes: LaneRegistry }> {
    clock = new FakeClock();
    service = await createTestApp(config, { clock, imports, platform });
    return { url: service.url, lanes: service.app.get(LaneRegistry) };
  }

  async function events(url: string): Promise<Array<{ callId: string; toolId: string; status: string }>> {
    return (await send('GET', `${url}/v1/events`)).body.events;
  }

  afterEach(async () => {
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  describe('success', () => {
    it('answers 200 with exactly callId, toolId, lane, pool, result, attempts, durationMs and replayed', async () => {
      const { url } = await start();

      const response = await invoke(url, 'echo', { q: 'today', n: [1, 2] }, { 'x-call-id': 'call-1' });

      expect(response.status).toBe(200);
      expect(response.headers['x-call-id']).toBe('call-1');
      expect(Object.keys(response.body).sort()).toEqual(
        ['attempts', 'callId', 'durationMs', 'lane', 'pool', 'replayed', 'result', 'toolId'].sort(),
      );
      expect(response.body).toEqual({
        callId: 'call-1',
        toolId: 'echo',
        lane: 'main',
        // A caller without a key is `anonymous`, never a configured tenant: the isolated pool.
        pool: 'isolated',
        result: { q: 'today', n: [1, 2] },
        attempts: 1,
        durationMs: expect.any(Number),
        replayed: false,
      });
    });

    it('reports durationMs in the time of the injected clock', async () => {
      const { url } = await start();

      const call = invoke(url, 'wait', { ms: 1500 });
      await eventually(() => expect(clock.pendingTimers).toBe(2));
      clock.advance(1500);
      const response = await call;

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ result: { waitedMs: 1500 }, durationMs: 1500, attempts: 1 });
    });
  });

  describe('X-Call-Id', () => {
    it('echoes a valid X-Call-Id in the x-call-id header and the body', async () => {
      const { url } = await start();
      const id = `Az09_-${'x'.repeat(42)}`;

      const response = await invoke(url, 'echo', {}, { 'x-call-id': id });

      expect(response.status).toBe(200);
      expect(response.headers['x-call-id']).toBe(id);
      expect(response.body.callId).toBe(id);
      expect((await events(url)).at(-1)).toMatchObject({ callId: id, status: 'ok' });
    });

    it('generates a distinct valid call id when the header is absent', async () => {
      const { url } = await start();

      const first = await invoke(url, 'echo');
      const second = await invoke(url, 'echo');

      for (const response of [first, second]) {
        expect(response.body.callId).toMatch(CALL_ID);
        expect(response.headers['x-call-id']).toBe(response.body.callId);
      }
      expect(first.body.callId).not.toBe(second.body.callId);
    });

    it.each([
      ['one with a space', 'has space-7', 'has space-7'],
      ['one of 49 characters', 'Q'.repeat(49), 'Q'.repeat(49)],
      ['one with a non-ASCII letter', 'zürich-7', 'rich-7'],
      ['one with a comma', 'a,b-7', 'a,b-7'],
    ])('refuses %s with 400 invalid_request and echoes it nowhere', async (_label, id, needle) => {
      const { url } = await start();

      const response = await invoke(url, 'echo', {}, { 'x-call-id': id });

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error.attempts).toBe(0);
      expect(response.headers['x-call-id']).toBeUndefined();
      expect(response.body.callId).toBeUndefined();
      expectNothingLeaked(response, needle);
      expect(await events(url)).toEqual([]);
    });
  });

  describe('unknown tools', () => {
    it('answers 404 not_found naming a tool id that is a valid name', async () => {
      const { url } = await start();

      const response = await invoke(url, 'no_such.tool', {}, { 'x-call-id': 'lost-1' });

      const error = expectEnvelope(response, 404, 'not_found');
      expect(error.message).toBe("unknown tool 'no_such.tool'");
      expect(response.body.callId).toBe('lost-1');
      expect(response.body.toolId).toBeUndefined();
    });

    it.each([
      ['markup', '%3Cimg%20src%3Dx%3E', '<img'],
      ['a space', 'evil%20tool', 'evil'],
      ['65 characters', 'k'.repeat(65), 'k'.repeat(65)],
    ])('does not echo a tool id with %s', async (_label, toolId, needle) => {
      const { url } = await start();

      const response = await invoke(url, toolId);

      const error = expectEnvelope(response, 404, 'not_found');
      expect(error.message).toBe('unknown tool');
      expectNothingLeaked(response, needle);
    });
  });

  describe('body', () => {
    it('treats a request without a body as empty arguments', async () => {
      const { url } = await start();

      const response = await send('POST', `${url}/v1/tools/echo/invoke`);

      expect(response.status).toBe(200);
      expect(response.body.result).toEqual({});
    });

    it('treats a body without "arguments" as empty arguments', async () => {
      const { url } = await start();

      const response = await send('POST', `${url}/v1/tools/echo/invoke`, { json: {} });

      expect(response.status).toBe(200);
      expect(response.body.result).toEqual({});
    });

    it.each([
      ['an array body', [{ arguments: {} }]],
      ['a string body', 'arguments'],
      ['a number body', 7],
      ['"arguments" as a string', { arguments: '{"q":1}' }],
      ['"arguments" as an array', { arguments: [1, 2] }],
      ['"arguments" as null', { arguments: null }],
      ['an unknown top-level key', { arguments: {}, tenant: 'acme' }],
    ])('refuses %s with 400 invalid_request before admission', async (_label, body) => {
      const { url, lanes } = await start();

      const response = await send('POST', `${url}/v1/tools/echo/invoke`, { json: body });

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error.attempts).toBe(0);
      // Express's JSON parser is strict: a body that is neither an object nor an array is refused
      // before any route, so before the tool is known.
      const parserRefuses = platform === 'express' && (body === null || typeof body !== 'object');
      expect(response.body.toolId).toBe(parserRefuses ? undefined : 'echo');
      expect(lanes.get('main')!.snapshot()).toMatchObject({ active: 0, waiting: 0, peakActive: 0 });
    });
  });

  describe('argument schema', () => {
    it.each([[{ ms: -1 }], [{ ms: '5' }], [{ ms: 1.5 }], [{ ms: 600_001 }], [{}]])(
      'refuses delay arguments %j as 400 schema and admits nothing',
      async (args) => {
        const { url, lanes } = await start();

        const response = await invoke(url, 'wait', args, { 'x-call-id': 'bad-ms' });

        const error = expectEnvelope(response, 400, 'schema');
        expect(error).toMatchObject({ jsonrpcCode: -32602, attempts: 0 });
        expect(lanes.get('solo')!.snapshot()).toMatchObject({ active: 0, waiting: 0, peakActive: 0 });
        expect((await send('GET', `${url}/v1/lanes`)).body.lanes.solo).toMatchObject({ active: 0, waiting: 0 });
        expect(clock.pendingTimers).toBe(0);
        expect(await events(url)).toEqual([expect.objectContaining({ callId: 'bad-ms', status: 'schema' })]);
      },
    );
  });

  describe('X-Timeout-Ms and X-Queue-Ttl-Ms', () => {
    const headers = ['x-timeout-ms', 'x-queue-ttl-ms'];
    const invalid = ['0', '-1', 'abc', 'Infinity', '1e3', 'NaN', '0x10', '1,000'];

    it.each(headers.flatMap((header) => invalid.map((value) => [header, value])))(
      'refuses %s: %j with 400 invalid_request',
      async (header, value) => {
        const { url, lanes } = await start();

        const response = await invoke(url, 'solo_echo', {}, { [header]: value });

        expectEnvelope(response, 400, 'invalid_request');
        expect(lanes.get('solo')!.snapshot().peakActive).toBe(0);
      },
    );

    it.each([
      ['x-timeout-ms', '2001', 'X-Timeout-Ms', 2000],
      ['x-queue-ttl-ms', '1001', 'X-Queue-Ttl-Ms', 1000],
    ])('refuses %s: %s, above the configured maximum, naming the maximum', async (header, value, name, maxMs) => {
      const { url } = await start();

      const response = await invoke(url, 'solo_echo', {}, { [header]: value });

      const error = expectEnvelope(response, 400, 'invalid_request');
      expect(error.message).toContain(name);
      expect(error.message).toContain(String(maxMs));
    });

    it('accepts both headers at exactly the configured maximum', async () => {
      const { url } = await start();

      const response = await invoke(url, 'solo_echo', { a: 1 }, { 'x-timeout-ms': '2000', 'x-queue-ttl-ms': '1000' });

      expect(response.status).toBe(200);
      expect(response.body.result).toEqual({ a: 1 });
    });

    it('times a delay call out at a shorter X-Timeout-Ms in virtual time', async () => {
      const { url, lanes } = await start();

      const call = invoke(url, 'wait', { ms: 1500 }, { 'x-timeout-ms': '250' });
      await eventually(() => expect(clock.pendingTimers).toBe(2));
      clock.advance(249);
      expect(clock.pendingTimers).toBe(2);
      expect(lanes.get('solo')!.snapshot().active).toBe(1);
      clock.advance(1);
      const response = await call;

      const error = expectEnvelope(response, 504, 'timeout');
      expect(error).toMatchObject({ jsonrpcCode: -32010, attempts: 1 });
      expect(error.message).toContain('250 ms');
      // The delay was told to stop: its own timer is gone, nothing is left running.
      expect(clock.pendingTimers).toBe(0);
      expect(lanes.get('solo')!.snapshot()).toMatchObject({ active: 0, waiting: 0 });
    });

    it('expires a waiting call at a shorter X-Queue-Ttl-Ms', async () => {
      const { url, lanes } = await start();
      const running = invoke(url, 'wait', { ms: 1500 });
      await eventually(() => expect(lanes.get('solo')!.snapshot().active).toBe(1));

      const waiting = invoke(url, 'wait', { ms: 10 }, { 'x-queue-ttl-ms': '300' });
      await eventually(() => expect(lanes.get('solo')!.snapshot().waiting).toBe(1));
      clock.advance(299);
      expect(lanes.get('solo')!.snapshot().waiting).toBe(1);
      clock.advance(1);

      const error = expectEnvelope(await waiting, 503, 'queue_expired');
      expect(error.attempts).toBe(0);
      clock.advance(1200);
      expect((await running).status).toBe(200);
    });
  });

  describe('timeouts and lane refusals', () => {
    it('answers 504 timeout when a delay outlives the tool timeoutMs', async () => {
      const { url, lanes } = await start();

      const call = invoke(url, 'wait', { ms: 5000 }, { 'x-call-id': 'slow-1' });
      await eventually(() => expect(clock.pendingTimers).toBe(2));
      clock.advance(1999);
      expect(clock.pendingTimers).toBe(2);
      clock.advance(1);
      const response = await call;

      const error = expectEnvelope(response, 504, 'timeout');
      expect(error).toEqual({
        kind: 'timeout',
        message: "tool 'wait' did not finish within 2000 ms",
        attempts: 1,
        jsonrpcCode: -32010,
      });
      expect(response.body).toMatchObject({ callId: 'slow-1', toolId: 'wait' });
      expect(clock.pendingTimers).toBe(0);
      expect(lanes.get('solo')!.snapshot().active).toBe(0);
      expect((await events(url)).at(-1)).toMatchObject({ callId: 'slow-1', status: 'timeout' });
    });

    it('answers 503 queue_full with Retry-After when the lane has no room', async () => {
      const { url, lanes } = await start();
      const running = invoke(url, 'hold', { ms: 1000 });
      await eventually(() => expect(lanes.get('zero')!.snapshot().active).toBe(1));

      const refused = await invoke(url, 'hold', { ms: 1000 }, { 'x-call-id': 'full-1' });

      expect(refused.headers['retry-after']).toBe('1');
      const error = expectEnvelope(refused, 503, 'queue_full');
      expect(error).toEqual({
        kind: 'queue_full',
        message: "lane 'zero' is full: 1 running, 0 waiting",
        attempts: 0,
        jsonrpcCode: -32006,
        retryAfterMs: 1000,
      });
      expect(refused.body).toMatchObject({ callId: 'full-1', toolId: 'hold' });
      clock.advance(1000);
      expect((await running).status).toBe(200);
      expect(lanes.get('zero')!.snapshot().peakActive).toBe(1);
    });

    it('answers 503 queue_expired when a waiting call reaches the lane queue TTL', async () => {
      const { url, lanes } = await start();
      const running = invoke(url, 'wait', { ms: 1500 });
      await eventually(() => expect(lanes.get('solo')!.snapshot().active).toBe(1));

      const waiting = invoke(url, 'wait', { ms: 10 }, { 'x-call-id': 'late-1' });
      await eventually(() => expect(lanes.get('solo')!.snapshot().waiting).toBe(1));
      clock.advance(999);
      expect(lanes.get('solo')!.snapshot().waiting).toBe(1);
      clock.advance(1);
      const expired = await waiting;

      const error = expectEnvelope(expired, 503, 'queue_expired');
      expect(error).toMatchObject({ jsonrpcCode: -32007, attempts: 0 });
      expect(lanes.get('solo')!.snapshot()).toMatchObject({ active: 1, waiting: 0 });
      clock.advance(500);
      expect((await running).status).toBe(200);
      expect((await events(url)).map(({ callId, status }) => [callId, status])).toContainEqual([
        'late-1',
        'queue_expired',
      ]);
    });

    it('answers 503 stopped once the lanes stop admission', async () => {
      const { url, lanes } = await start();
      lanes.close();

      const response = await invoke(url, 'echo', {}, { 'x-call-id': 'after-close' });

      const error = expectEnvelope(response, 503, 'stopped');
      expect(error).toMatchObject({ jsonrpcCode: -32009, attempts: 0 });
      expect(response.headers['retry-after']).toBeUndefined();
      expect(lanes.get('main')!.snapshot().peakActive).toBe(0);
      expect((await events(url)).at(-1)).toMatchObject({ callId: 'after-close', status: 'stopped' });
    });
  });

  describe('code tools', () => {
    const codeConfig = {
      lanes: { main: { concurrency: 2, queueCapacity: 2 }, other: { concurrency: 1, queueCapacity: 0 } },
      tools: {
        'acme.configured': { lane: 'other', kind: 'code', timeoutMs: 3000 },
        'acme.relaned': { lane: 'other', kind: 'code' },
      },
    };

    it('runs a @Tool method with the call id, its tool id and the anonymous tenant', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const response = await invoke(url, 'acme.lookup', { id: 7 }, { 'x-call-id': 'code-1' });

      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        callId: 'code-1',
        toolId: 'acme.lookup',
        lane: 'main',
        attempts: 1,
        result: { args: { id: 7 }, callId: 'code-1', toolId: 'acme.lookup', tenant: 'anonymous' },
      });
    });

    it('answers 500 internal without the message of a plain Error the tool throws', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const response = await invoke(url, 'acme.explode', { card: 'x' }, { 'x-call-id': 'boom-1' });

      const error = expectEnvelope(response, 500, 'internal');
      expect(error).toMatchObject({ jsonrpcCode: -32603, attempts: 1 });
      expectNothingLeaked(response, 'secret-argument-value', 'secret', 'Error:');
      expect((await events(url)).at(-1)).toMatchObject({ callId: 'boom-1', status: 'internal' });
    });

    it('answers 400 schema when the tool throws a schema ResilienceError', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const response = await invoke(url, 'acme.refuse', { extra: true });

      const error = expectEnvelope(response, 400, 'schema');
      expect(error).toMatchObject({ message: 'acme.refuse takes no arguments', jsonrpcCode: -32602, attempts: 1 });
    });

    it('refuses arguments its validate option rejects before admission', async () => {
      const { url, lanes } = await start(codeConfig, [AcmeToolsModule]);

      const refused = await invoke(url, 'acme.strict', { id: 'seven' });
      expect(lanes.get('main')!.snapshot().peakActive).toBe(0);
      const accepted = await invoke(url, 'acme.strict', { id: 7 });

      expect(expectEnvelope(refused, 400, 'schema')).toMatchObject({ attempts: 0 });
      expect(accepted.body.result).toEqual({ id: 7 });
    });

    it('times a @Tool method out at the timeoutMs of its decorator', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const call = invoke(url, 'acme.slow');
      await eventually(() => expect(clock.pendingTimers).toBe(1));
      clock.advance(999);
      expect(clock.pendingTimers).toBe(1);
      clock.advance(1);

      const error = expectEnvelope(await call, 504, 'timeout');
      expect(error.message).toBe("tool 'acme.slow' did not finish within 1000 ms");
    });

    it('lets a config entry of kind code override the lane and timeoutMs of the decorator', async () => {
      const { url, lanes } = await start(codeConfig, [AcmeToolsModule]);

      const call = invoke(url, 'acme.configured');
      await eventually(() => expect(lanes.get('other')!.snapshot().active).toBe(1));
      clock.advance(1000);
      expect(clock.pendingTimers).toBe(1);
      clock.advance(2000);
      const response = await call;

      const error = expectEnvelope(response, 504, 'timeout');
      expect(error.message).toBe("tool 'acme.configured' did not finish within 3000 ms");
      expect(lanes.get('main')!.snapshot().peakActive).toBe(0);
    });
  });

  describe('code tool regressions', () => {
    const codeConfig = {
      lanes: { main: { concurrency: 2, queueCapacity: 2 }, other: { concurrency: 1, queueCapacity: 0 } },
      tools: { 'acme.relaned': { lane: 'other', kind: 'code' } },
    };

    it('keeps the decorator timeoutMs when a config entry of kind code only moves the lane', async () => {
      const { url, lanes } = await start(codeConfig, [AcmeToolsModule]);

      const call = invoke(url, 'acme.relaned');
      await eventually(() => expect(lanes.get('other')!.snapshot().active).toBe(1));
      clock.advance(1000);

      const error = expectEnvelope(await call, 504, 'timeout');
      expect(error.message).toBe("tool 'acme.relaned' did not finish within 1000 ms");
    });

    it('answers a tool that returns nothing with result null', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const response = await invoke(url, 'acme.void');

      expect(response.status).toBe(200);
      expect(response.body).toHaveProperty('result', null);
    });

    it('answers a result that is not JSON as internal, and records it so', async () => {
      const { url } = await start(codeConfig, [AcmeToolsModule]);

      const response = await invoke(url, 'acme.bigint', {}, { 'x-call-id': 'bigint-1' });

      expect(expectEnvelope(response, 500, 'internal')).toMatchObject({ attempts: 1 });
      expect((await events(url)).at(-1)).toMatchObject({ callId: 'bigint-1', status: 'internal' });
    });
  });

  describe('boot', () => {
    @Injectable()
    class FirstDuplicate {
      @Tool('acme.dup', { lane: 'main' })
      first() {
        return 1;
      }
    }

    @Injectable()
    class SecondDuplicate {
      @Tool('acme.dup', { lane: 'main' })
      second() {
        return 2;
      }
    }

    @Injectable()
    class LostTool {
      @Tool('acme.lost', { lane: 'nowhere' })
      lost() {
        return 3;
      }
    }

    @Module({ providers: [FirstDuplicate, SecondDuplicate] })
    class DuplicateToolsModule {}

    @Module({ providers: [LostTool] })
    class LostToolModule {}

    @Module({ providers: [FirstDuplicate] })
    class OneToolModule {}

    @Injectable()
    class BadlyNamedTool {
      @Tool('acme lookup', { lane: 'main' })
      lookup() {
        return 4;
      }
    }

    @Injectable()
    class EndlessTool {
      @Tool('acme.endless', { lane: 'main', timeoutMs: 0 })
      endless() {
        return 5;
      }
    }

    const lanes = { main: { concurrency: 1, queueCapacity: 0 } };

    it('fails when a config tool of kind code has no @Tool provider', async () => {
      await expect(createTestApp({ lanes, tools: { ghost: { lane: 'main', kind: 'code' } } })).rejects.toThrow(
        "tool 'ghost' is of kind code, but no provider has a @Tool('ghost') method",
      );
    });

    it('fails when two providers register the same @Tool id', async () => {
      await expect(createTestApp({ lanes }, { imports: [DuplicateToolsModule] })).rejects.toThrow(
        "@Tool('acme.dup') is on both FirstDuplicate.first and SecondDuplicate.second",
      );
    });

    it('fails when a @Tool names a lane the config does not have', async () => {
      await expect(createTestApp({ lanes }, { imports: [LostToolModule] })).rejects.toThrow(
        "tool 'acme.lost': the config has no lane 'nowhere' (lanes: main)",
      );
    });

    it('fails when a @Tool id is not a valid name', async () => {
      @Module({ providers: [BadlyNamedTool] })
      class BadlyNamedModule {}

      await expect(createTestApp({ lanes }, { imports: [BadlyNamedModule] })).rejects.toThrow(
        "@Tool('acme lookup') on BadlyNamedTool.lookup: a tool id is 1-64 letters",
      );
    });

    it('fails when a @Tool timeoutMs is out of range', async () => {
      @Module({ providers: [EndlessTool] })
      class EndlessModule {}

      await expect(createTestApp({ lanes }, { imports: [EndlessModule] })).rejects.toThrow(
        "@Tool('acme.endless') on EndlessTool.endless: timeoutMs must be an integer from 1 to 600000",
      );
    });

    it('fails when a config tool of another kind has the id of a @Tool', async () => {
      const tools = { 'acme.dup': { lane: 'main', kind: 'builtin', builtin: 'echo' } };
      await expect(createTestApp({ lanes, tools }, { imports: [OneToolModule] })).rejects.toThrow(
        "tool 'acme.dup' is both a builtin tool in the config and a @Tool method",
      );
    });
  });
});

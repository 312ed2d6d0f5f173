import { resolve } from 'node:path';
import { deferred, type Deferred, track } from '../support/deferred';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import {
  killAll,
  listeningPort,
  SPAWNED_TEST_TIMEOUT_MS,
  spawnService,
  type ServiceProcess,
} from '../support/spawn-service';
import { Upstream } from '../support/upstream';

/**
 * The process policy of docs/design.md ("What nobody foresaw: the process policy") on the real
 * process: src/main.ts in a child process with a bug planted in it (a SIGUSR2 makes it reject a
 * promise nobody handles, or throw from a callback), a real upstream held by hand. Nothing here
 * measures time: the tests check what the process does and says, and how it ends.
 */

const CONFIG = resolve(__dirname, '../fixtures/service/unexpected-errors.yaml');
const ENTRY = resolve(__dirname, '../fixtures/service/unexpected-errors.ts');
/** Long enough for the test's own steps during the drain on a loaded machine; the drain ends early when idle. */
const DRAIN_MS = 120_000;
// Each test starts the service: minutes, so a loaded machine's slow start-up is not a failure.
const TEST_TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;
const CLOSE = { connection: 'close' };
/** What the planted error's message quotes (V8 quotes about ten characters): never in the log. */
const PLANTED_PAYLOAD = 'SECRETBYTE';

interface UnexpectedLine {
  event: string;
  level: number | string;
  where: string;
  errorName: string;
  frames?: string[];
  count: number;
}

describe('an error nobody handled, in the running service', () => {
  const children: ServiceProcess[] = [];
  let upstream: Upstream | undefined;
  let release: Deferred<void>;

  beforeEach(() => {
    release = deferred();
  });

  afterEach(async () => {
    release.resolve();
    await killAll(children);
    await upstream?.close();
    upstream = undefined;
  });

  async function startService(unexpected: 'reject' | 'throw', onRejection: 'serve' | 'drain') {
    upstream = await Upstream.start(async (request, response) => {
      await release.promise;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ done: request.body }));
    });
    const service = spawnService(
      {
        BULKHEAD_CONFIG: CONFIG,
        DRAIN_MS: String(DRAIN_MS),
        ON_REJECTION: onRejection,
        UPSTREAM_URL: upstream.url('/slow'),
        UNEXPECTED: unexpected,
        PLANTED_PAYLOAD,
      },
      ENTRY,
    );
    children.push(service);
    const port = await listeningPort(service);
    return { service, url: `http://127.0.0.1:${port}`, held: upstream };
  }

  const unexpectedErrors = async (url: string, where: string) =>
    sampleValue(
      parsePromText((await send('GET', `${url}/metrics`, { headers: CLOSE })).body as string),
      'bulkhead_unexpected_errors_total',
      { where },
    );

  /** The child's `unexpected_error` lines (JSON), in the order it wrote them. */
  function unexpectedLines(service: ServiceProcess): UnexpectedLine[] {
    return service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as UnexpectedLine)
      .filter((line) => line.event === 'unexpected_error');
  }

  it(
    'keeps serving after an unhandled rejection: counts it, logs its class and frames, never its message',
    async () => {
      const { service, url } = await startService('reject', 'serve');
      expect(await unexpectedErrors(url, 'unhandled_rejection')).toBe(0);
      expect(await unexpectedErrors(url, 'uncaught_exception')).toBe(0);

      service.child.kill('SIGUSR2');
      await eventually(async () => expect(await unexpectedErrors(url, 'unhandled_rejection')).toBe(1));
      service.child.kill('SIGUSR2');
      await eventually(async () => expect(await unexpectedErrors(url, 'unhandled_rejection')).toBe(2));

      expect((await send('GET', `${url}/health/live`, { headers: CLOSE })).status).toBe(200);
      expect((await send('GET', `${url}/health/ready`, { headers: CLOSE })).status).toBe(200);
      expect((await invoke(url, 'echo', { still: 'serving' }, CLOSE)).status).toBe(200);
      expect(service.child.exitCode).toBeNull();

      const lines = unexpectedLines(service);
      expect(lines).toEqual([
        expect.objectContaining({ where: 'unhandled_rejection', errorName: 'SyntaxError', count: 1, level: 'error' }),
        expect.objectContaining({ where: 'unhandled_rejection', errorName: 'SyntaxError', count: 2, level: 'error' }),
      ]);
      expect(lines[0].frames?.length).toBeGreaterThan(0);
      expect(service.output()).not.toContain(PLANTED_PAYLOAD);
      expect(service.output()).not.toContain('tool_calls');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'drains after an uncaught exception: finishes the accepted call, refuses new ones, exits 1',
    async () => {
      const { service, url, held } = await startService('throw', 'serve');
      const running = send('POST', `${url}/v1/tools/slow_call/invoke`, {
        json: { arguments: { n: 1 } },
        headers: CLOSE,
      });
      const runningState = track(running);
      await eventually(() => expect(held.requests).toHaveLength(1));

      service.child.kill('SIGUSR2');
      await eventually(async () =>
        expect((await send('GET', `${url}/health/ready`, { headers: CLOSE })).status).toBe(503),
      );
      expect(await unexpectedErrors(url, 'uncaught_exception')).toBe(1);
      const refused = await invoke(url, 'echo', { late: true }, CLOSE);
      expect(refused.body.error).toMatchObject({ kind: 'stopped' });
      expect(runningState.state).toBe('pending');

      release.resolve();
      expect((await running).status).toBe(200);
      expect(await service.exited).toEqual({ code: 1, signal: null });

      expect(unexpectedLines(service)).toEqual([
        expect.objectContaining({ where: 'uncaught_exception', errorName: 'SyntaxError', count: 1 }),
      ]);
      expect(service.output()).toContain('shutting down after an uncaught exception');
      expect(service.output()).toContain('drained: every accepted call finished');
      expect(service.output()).not.toContain(PLANTED_PAYLOAD);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'drains after an unhandled rejection too when server.onUnhandledRejection is drain, and exits 1',
    async () => {
      const { service, url } = await startService('reject', 'drain');
      service.child.kill('SIGUSR2');
      expect(await service.exited).toEqual({ code: 1, signal: null });
      expect(unexpectedLines(service)).toEqual([
        expect.objectContaining({ where: 'unhandled_rejection', errorName: 'SyntaxError', count: 1 }),
      ]);
      expect(service.output()).toContain('shutting down after an unhandled rejection');
      expect(service.output()).not.toContain(PLANTED_PAYLOAD);
      await expect(send('GET', `${url}/health/live`, { headers: CLOSE })).rejects.toThrow();
    },
    TEST_TIMEOUT_MS,
  );
});

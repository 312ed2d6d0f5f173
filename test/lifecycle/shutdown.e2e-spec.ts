import { resolve } from 'node:path';
import { Agent } from 'undici';
import { deferred, type Deferred, track } from '../support/deferred';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import {
  killAll,
  listeningPort,
  SPAWNED_TEST_TIMEOUT_MS,
  spawnService,
  type ServiceProcess,
} from '../support/spawn-service';
import { hang, Upstream } from '../support/upstream';

/**
 * The shutdown sequence of docs/design.md ("Lanes: Shutdown") on the real process:
 * src/main.ts in a child process, a real signal, a real upstream held by hand. Nothing here
 * measures time; the tests check what happens, in which order, and how the process ends.
 */

const CONFIG = resolve(__dirname, '../fixtures/service/drain.yaml');
/** Longer than the test's own steps during a drain on a loaded machine; an idle drain ends at once. */
const LONG_DRAIN_MS = 120_000;
const SHORT_DRAIN_MS = 300;
// Each test starts the service: minutes, so a loaded machine's slow start-up is not a failure.
const TEST_TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;

/** A request that opens its own connection and closes it after: no keep-alive races. */
const CLOSE = { connection: 'close' };

interface Running {
  service: ServiceProcess;
  url: string;
}

describe('shutdown of the running service', () => {
  const children: ServiceProcess[] = [];
  const agents: Agent[] = [];
  let upstream: Upstream | undefined;
  let release: Deferred<void>;

  beforeEach(() => {
    release = deferred();
  });

  afterEach(async () => {
    release.resolve();
    await killAll(children);
    await Promise.all(agents.splice(0).map((agent) => agent.destroy()));
    await upstream?.close();
    upstream = undefined;
  });

  /** An upstream that answers 200 only once the test releases it. */
  async function heldUpstream(): Promise<Upstream> {
    upstream = await Upstream.start(async (request, response) => {
      await release.promise;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ done: request.body }));
    });
    return upstream;
  }

  async function startService(drainMs: number, upstreamUrl: string): Promise<Running> {
    const service = spawnService({ BULKHEAD_CONFIG: CONFIG, DRAIN_MS: String(drainMs), UPSTREAM_URL: upstreamUrl });
    children.push(service);
    const port = await listeningPort(service);
    return { service, url: `http://127.0.0.1:${port}` };
  }

  /** A keep-alive client that counts the connections it opens and sees closed. */
  function keepAliveClient() {
    const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
    agents.push(agent);
    const counts = { connects: 0, disconnects: 0 };
    agent.on('connect', () => counts.connects++);
    agent.on('disconnect', () => counts.disconnects++);
    return { agent, counts };
  }

  const ready = (url: string) => send('GET', `${url}/health/ready`, { headers: CLOSE });
  const lanes = async (url: string) => (await send('GET', `${url}/v1/lanes`, { headers: CLOSE })).body.lanes;

  /** Polls readiness until it answers 503, which is how a load balancer sees the drain begin. */
  async function readinessFlips(url: string): Promise<void> {
    await eventually(async () => expect((await ready(url)).status).toBe(503));
  }

  /** The `msg` of the child's shutdown lines (JSON, `event: shutdown`), in the order it wrote them. */
  function lifecycleLog(service: ServiceProcess): string[] {
    return service
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { event?: string; msg?: string })
      .filter((line) => line.event === 'shutdown')
      .map((line) => line.msg!);
  }

  it(
    'SIGTERM: stops admission and readiness at once, closes connections, finishes every accepted call, exits 0',
    async () => {
      const held = await heldUpstream();
      const { service, url } = await startService(LONG_DRAIN_MS, held.url('/slow'));
      const calls = keepAliveClient();
      const watcher = keepAliveClient();

      expect((await ready(url)).status).toBe(200);
      const warm = await send('GET', `${url}/health/ready`, { dispatcher: watcher.agent });
      expect(warm.status).toBe(200);
      expect(warm.headers.connection).toBe('keep-alive');
      expect(watcher.counts).toEqual({ connects: 1, disconnects: 0 });

      // One call provably at the upstream, one waiting behind it in the same lane.
      const running = send('POST', `${url}/v1/tools/slow_call/invoke`, {
        json: { arguments: { n: 1 } },
        headers: { 'x-call-id': 'running-1' },
        dispatcher: calls.agent,
      });
      const runningState = track(running);
      await eventually(() => expect(held.requests).toHaveLength(1));
      const waiting = send('POST', `${url}/v1/tools/slow_call/invoke`, {
        json: { arguments: { n: 2 } },
        headers: { 'x-call-id': 'waiting-2' },
        dispatcher: calls.agent,
      });
      const waitingState = track(waiting);
      await eventually(async () => expect((await lanes(url)).slow).toMatchObject({ active: 1, waiting: 1 }));

      service.child.kill('SIGTERM');
      await readinessFlips(url);

      // The idle keep-alive connection was closed by the server when the drain began.
      await eventually(() => expect(watcher.counts.disconnects).toBe(1));

      // During the drain: readiness 503 and `Connection: close` on a keep-alive client...
      const notReady = await send('GET', `${url}/health/ready`, { dispatcher: watcher.agent });
      expect(notReady.status).toBe(503);
      expect(notReady.body.error).toMatchObject({ kind: 'unavailable' });
      expect(notReady.headers.connection).toBe('close');
      // ...new calls are refused `stopped`, in a lane with room and in the full one alike...
      const refused = await send('POST', `${url}/v1/tools/echo/invoke`, {
        json: { arguments: { late: true } },
        headers: { 'x-call-id': 'late-3' },
        dispatcher: watcher.agent,
      });
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({
        error: expect.objectContaining({ kind: 'stopped', jsonrpcCode: -32009, attempts: 0 }),
        callId: 'late-3',
        toolId: 'echo',
      });
      expect(refused.headers.connection).toBe('close');
      // ...and the keep-alive client opened a new connection for each request after the first.
      expect(watcher.counts.connects).toBe(3);
      const refusedInFullLane = await invoke(url, 'slow_call', { n: 4 }, { ...CLOSE, 'x-call-id': 'late-4' });
      expect(refusedInFullLane.status).toBe(503);
      expect(refusedInFullLane.body.error.kind).toBe('stopped');

      // The accepted calls are still there, untouched.
      expect(runningState.state).toBe('pending');
      expect(waitingState.state).toBe('pending');
      expect((await lanes(url)).slow).toMatchObject({ active: 1, waiting: 1 });
      expect(held.requests).toHaveLength(1);
      expect(service.child.exitCode).toBeNull();

      release.resolve();
      const [first, second] = await Promise.all([running, waiting]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(first.body).toMatchObject({ callId: 'running-1', toolId: 'slow_call', result: { done: '{"n":1}' } });
      expect(second.body).toMatchObject({ callId: 'waiting-2', toolId: 'slow_call', result: { done: '{"n":2}' } });
      expect(first.headers.connection).toBe('close');
      expect(second.headers.connection).toBe('close');
      expect(held.requests.map((request) => request.headers['x-call-id'])).toEqual(['running-1', 'waiting-2']);
      expect(held.peakInFlight).toBe(1);
      expect(held.abandoned).toBe(0);

      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(lifecycleLog(service)).toEqual([
        'SIGTERM received',
        `shutting down: admission stopped, draining for up to ${LONG_DRAIN_MS} ms`,
        'drained: every accepted call finished',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'SIGTERM: a call that will not finish is aborted at the drain deadline and answered stopped; exits 0',
    async () => {
      upstream = await Upstream.start(hang);
      const held = upstream;
      const { service, url } = await startService(SHORT_DRAIN_MS, held.url('/hang'));

      const running = invoke(url, 'slow_call', { n: 1 }, { 'x-call-id': 'stuck-1' });
      await eventually(() => expect(held.requests).toHaveLength(1));
      const waiting = invoke(url, 'slow_call', { n: 2 }, { 'x-call-id': 'stuck-2' });
      await eventually(async () => expect((await lanes(url)).slow).toMatchObject({ active: 1, waiting: 1 }));

      service.child.kill('SIGTERM');
      const [first, second] = await Promise.all([running, waiting]);

      for (const [answer, callId] of [
        [first, 'stuck-1'],
        [second, 'stuck-2'],
      ] as const) {
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual({
          error: expect.objectContaining({
            kind: 'stopped',
            message: 'the service shut down before the call finished',
            jsonrpcCode: -32009,
          }),
          callId,
          toolId: 'slow_call',
        });
      }
      expect(first.body.error.attempts).toBe(1);
      expect(second.body.error.attempts).toBe(0);
      // The running call's abort reached its socket: the upstream saw the request abandoned.
      // (Had it not, the outbound agent's graceful close would wait on it and the process
      // would end by its fallback timer with code 1, not 0.)
      await eventually(() => expect(held.abandoned).toBe(1));
      // The waiting call never reached the upstream.
      expect(held.requests.map((request) => request.headers['x-call-id'])).toEqual(['stuck-1']);

      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(lifecycleLog(service)).toEqual([
        'SIGTERM received',
        `shutting down: admission stopped, draining for up to ${SHORT_DRAIN_MS} ms`,
        'drain time over: stopping 2 unfinished calls',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'SIGINT: the same drain as SIGTERM, and exit code 0',
    async () => {
      const held = await heldUpstream();
      const { service, url } = await startService(LONG_DRAIN_MS, held.url('/slow'));

      const running = invoke(url, 'slow_call', { n: 1 }, { 'x-call-id': 'int-1' });
      const runningState = track(running);
      await eventually(() => expect(held.requests).toHaveLength(1));

      service.child.kill('SIGINT');
      await readinessFlips(url);
      const refused = await invoke(url, 'echo', {}, CLOSE);
      expect(refused.status).toBe(503);
      expect(refused.body.error.kind).toBe('stopped');
      expect(runningState.state).toBe('pending');

      release.resolve();
      const answer = await running;
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ callId: 'int-1', result: { done: '{"n":1}' } });
      expect(answer.headers.connection).toBe('close');

      expect(await service.exited).toEqual({ code: 0, signal: null });
      expect(lifecycleLog(service)).toEqual([
        'SIGINT received',
        `shutting down: admission stopped, draining for up to ${LONG_DRAIN_MS} ms`,
        'drained: every accepted call finished',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an idle service exits 0 on SIGTERM without waiting for the drain time',
    async () => {
      const idle = await heldUpstream();
      const { service, url } = await startService(LONG_DRAIN_MS, idle.url('/slow'));
      expect((await invoke(url, 'echo', { hello: 'world' }, CLOSE)).status).toBe(200);

      service.child.kill('SIGTERM');

      expect(await service.exited).toEqual({ code: 0, signal: null });
      // Drained because nothing was left, not because the drain time ran out.
      expect(lifecycleLog(service)).toEqual([
        'SIGTERM received',
        `shutting down: admission stopped, draining for up to ${LONG_DRAIN_MS} ms`,
        'drained: every accepted call finished',
      ]);
      expect(idle.requests).toHaveLength(0);
    },
    TEST_TIMEOUT_MS,
  );
});

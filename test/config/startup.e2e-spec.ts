import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { invoke, send } from '../support/http-client';
import {
  killAll,
  listeningPort,
  SPAWNED_TEST_TIMEOUT_MS,
  spawnService,
  type ServiceProcess,
} from '../support/spawn-service';

/** A lane's waiting calls by priority class when none waits. */
const NONE_WAITING = { critical: 0, standard: 0, sheddable: 0 };

/**
 * Start-up of the real process (src/main.ts in a child process) from a config file:
 * docs/http-contract.md section 7. A bad config stops start-up with exit code 1 and one line per problem;
 * a good one serves, and SIGTERM ends it with exit code 0.
 */

const FIXTURES = resolve(__dirname, '../fixtures/service');
const fixture = (name: string) => resolve(FIXTURES, name);
// Each test starts the service: minutes, so a loaded machine's slow start-up is not a failure.
const TEST_TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;
/** A request that opens its own connection and closes it after. */
const CLOSE = { connection: 'close' };

describe('start-up from the config file', () => {
  const children: ServiceProcess[] = [];

  afterEach(async () => {
    await killAll(children);
  });

  function spawn(env: Record<string, string>): ServiceProcess {
    const service = spawnService(env);
    children.push(service);
    return service;
  }

  /** Runs the service until it exits on its own; start-up failures end it. */
  async function runToExit(env: Record<string, string>) {
    const service = spawn(env);
    const exit = await service.exited;
    const lines = service
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '');
    return { exit, output: service.output(), lines };
  }

  /** Starts the service and waits for its `listening on` line; the port it logged. */
  async function start(env: Record<string, string>): Promise<{ service: ServiceProcess; port: number; url: string }> {
    const service = spawn(env);
    const port = await listeningPort(service);
    return { service, port, url: `http://127.0.0.1:${port}` };
  }

  async function stop(service: ServiceProcess) {
    service.child.kill('SIGTERM');
    return service.exited;
  }

  describe('refuses to start', () => {
    it(
      'on an invalid config: exit 1, one line per problem naming its key path, nothing listens',
      async () => {
        const path = fixture('several-problems.yaml');
        const { exit, output, lines } = await runToExit({ BULKHEAD_CONFIG: path, PORT: '0' });

        expect(exit).toEqual({ code: 1, signal: null });
        expect(output).not.toContain('listening on');
        expect(lines[0]).toBe(`bulkhead: invalid config ${path}`);
        expect(lines.slice(1).sort()).toEqual(
          [
            'server.colour: unknown key',
            'lanes.render.concurrency: must be an integer from 1 to 4096',
            "tools.preview.lane: unknown lane 'nowhere' (lanes: render, notes)",
          ].sort(),
        );
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when a tool names a lane the config does not define',
      async () => {
        const path = fixture('unknown-lane.yaml');
        const { exit, lines } = await runToExit({ BULKHEAD_CONFIG: path });

        expect(exit).toEqual({ code: 1, signal: null });
        expect(lines).toEqual([
          `bulkhead: invalid config ${path}`,
          "tools.preview.lane: unknown lane 'nowhere' (lanes: render, notes)",
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when the config file does not exist, naming the path',
      async () => {
        const path = fixture('no-such-config.yaml');
        const { exit, lines } = await runToExit({ BULKHEAD_CONFIG: path });

        expect(exit).toEqual({ code: 1, signal: null });
        expect(lines).toEqual([`bulkhead: invalid config ${path}`, `${path}: cannot read the config file (ENOENT)`]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when the config file is not valid YAML',
      async () => {
        const path = fixture('invalid-yaml.yaml');
        const { exit, lines } = await runToExit({ BULKHEAD_CONFIG: path });

        expect(exit).toEqual({ code: 1, signal: null });
        expect(lines).toHaveLength(2);
        expect(lines[0]).toBe(`bulkhead: invalid config ${path}`);
        expect(lines[1].startsWith(`${path}: not valid YAML: `)).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when its port is taken, saying which port and where it came from',
      async () => {
        const holder = createServer();
        await new Promise<void>((done) => holder.listen(0, '127.0.0.1', done));
        const taken = (holder.address() as AddressInfo).port;
        try {
          const { exit, lines } = await runToExit({
            BULKHEAD_CONFIG: fixture('minimal.yaml'),
            PORT: String(taken),
          });

          expect(exit).toEqual({ code: 1, signal: null });
          expect(lines.filter((line) => line.startsWith('bulkhead: failed to start:'))).toEqual([
            `bulkhead: failed to start: port ${taken} on 127.0.0.1 is in use (PORT): stop what holds it, or choose another port`,
          ]);
        } finally {
          holder.close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when a @Bulkhead route needs a lane the config lacks (examples: true without `general`)',
      async () => {
        const { exit, output, lines } = await runToExit({ BULKHEAD_CONFIG: fixture('examples-without-general.yaml') });

        expect(exit).toEqual({ code: 1, signal: null });
        const failure = lines.filter((line) => line.startsWith('bulkhead: failed to start:'));
        expect(failure).toHaveLength(1);
        expect(failure[0]).toMatch(
          /@Bulkhead\('general'\) on ReportsController\.\w+: the config has no lane 'general'/,
        );
        expect(output).not.toContain('listening on');
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('starts and serves', () => {
    it(
      'the default config (BULKHEAD_CONFIG unset, PORT=0): warmed up, the demo lanes, an echo call, exit 0 on SIGTERM',
      async () => {
        // As `npm start` runs it: with its warm-up (empty: the file's, which is the default).
        const { service, url } = await start({ PORT: '0', BULKHEAD_WARM_UP_MS: '' });
        expect(service.output()).toContain('with config/default.yaml');
        // Nothing it names is refused by its own egress rules.
        expect(service.output()).not.toContain('"event":"config"');
        // The request path ran hot before the service listened, every call of it answered...
        const warmed = /warmed the request path: (\d+) calls \((\d+) failed\)/.exec(service.output());
        expect(warmed).not.toBeNull();
        expect(Number(warmed![1])).toBeGreaterThan(0);
        expect(warmed![2]).toBe('0');
        expect(service.output().indexOf(warmed![0])).toBeLessThan(service.output().indexOf('listening on'));
        // ...and left nothing in what the service counts: no call, no tenant, no route of its own.
        const metrics = await send('GET', `${url}/metrics`, { headers: CLOSE });
        expect(metrics.body).not.toMatch(/warm/);
        expect(metrics.body).not.toMatch(/^bulkhead_(calls|llm_requests)_total\{/m);

        const lanes = await send('GET', `${url}/v1/lanes`, { headers: CLOSE });
        expect(lanes.status).toBe(200);
        expect(lanes.body).toEqual({
          lanes: {
            render: {
              active: 0,
              waiting: 0,
              waitingByClass: NONE_WAITING,
              concurrency: 1,
              queueCapacity: 2,
              peakActive: 0,
            },
            notes: {
              active: 0,
              waiting: 0,
              waitingByClass: NONE_WAITING,
              concurrency: 1,
              queueCapacity: 1,
              peakActive: 0,
            },
            general: {
              active: 0,
              waiting: 0,
              waitingByClass: NONE_WAITING,
              concurrency: 16,
              queueCapacity: 64,
              peakActive: 0,
            },
            llm: {
              active: 0,
              waiting: 0,
              waitingByClass: NONE_WAITING,
              concurrency: 8,
              queueCapacity: 32,
              peakActive: 0,
            },
          },
        });

        const echo = await invoke(url, 'echo', { say: 'hi' }, { ...CLOSE, 'x-call-id': 'echo-1' });
        expect(echo.status).toBe(200);
        expect(echo.body).toMatchObject({
          callId: 'echo-1',
          toolId: 'echo',
          lane: 'general',
          result: { say: 'hi' },
          attempts: 1,
          replayed: false,
        });

        // The shipped example controller is mounted (`examples: true`) and runs in its lane.
        const report = await send('POST', `${url}/v1/examples/reports/render`, { json: { ms: 0 }, headers: CLOSE });
        expect(report.status).toBe(200);
        expect(report.body).toEqual({ rendered: true, tookMs: 0 });

        // The offline LLM route answers as README's curl example shows.
        const chat = await send('POST', `${url}/v1/chat/completions`, {
          json: { model: 'demo', messages: [{ role: 'user', content: 'hello' }] },
          headers: CLOSE,
        });
        expect(chat.status).toBe(200);
        expect(chat.body.choices[0].message.content).toBe('hello');
        expect(chat.headers['x-bulkhead-served-by']).toBe('fake/fake-echo');

        expect(await stop(service)).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      '${ENV} values and the PORT override reach the running service',
      async () => {
        const { service, port, url } = await start({
          BULKHEAD_CONFIG: fixture('env.yaml'),
          PORT: '0',
          WORK_CONCURRENCY: '3',
          TEAM_NAME: 'search',
        });
        // The file says port 9; PORT=0 replaced it with a free port.
        expect(port).not.toBe(9);

        const lanes = await send('GET', `${url}/v1/lanes`, { headers: CLOSE });
        expect(lanes.body).toEqual({
          lanes: {
            work: {
              active: 0,
              waiting: 0,
              waitingByClass: NONE_WAITING,
              concurrency: 3,
              queueCapacity: 7,
              peakActive: 0,
            },
          },
        });
        const echo = await invoke(url, 'echo', { n: 1 }, CLOSE);
        expect(echo.status).toBe(200);
        expect(echo.body).toMatchObject({ lane: 'work', result: { n: 1 } });

        expect(await stop(service)).toEqual({ code: 0, signal: null });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a target the egress policy will refuse: starts, and warns once naming the target and the key to set',
      async () => {
        const { service } = await start({ BULKHEAD_CONFIG: fixture('local-model-server.yaml'), PORT: '0' });
        expect(await stop(service)).toEqual({ code: 0, signal: null });

        const warnings = service
          .output()
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { level: string; event?: string; msg: string })
          .filter((line) => line.event === 'config');
        expect(warnings).toEqual([
          expect.objectContaining({
            level: 'warn',
            msg: expect.stringMatching(
              /^llm\.routes\.local\.targets\.0 \(openai\/llama3 at http:\/\/127\.0\.0\.1:11434\): .*egress_denied.*set containment\.egress\.allowPrivateCidrs/,
            ),
          }),
        ]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'an unset ${ENV} the config needs is a start-up failure naming the key path and the variable',
      async () => {
        const { exit, lines } = await runToExit({ BULKHEAD_CONFIG: fixture('env.yaml'), PORT: '0' });

        expect(exit).toEqual({ code: 1, signal: null });
        expect(lines.slice(1).sort()).toEqual(
          [
            'lanes.work.concurrency: is required (environment variable WORK_CONCURRENCY is not set)',
            'tools.echo.description: environment variable TEAM_NAME is not set',
          ].sort(),
        );
      },
      TEST_TIMEOUT_MS,
    );
  });
});

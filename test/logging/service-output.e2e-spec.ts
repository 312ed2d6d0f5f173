import { invoke } from '../support/http-client';
import {
  killAll,
  listeningPort,
  SPAWNED_TEST_TIMEOUT_MS,
  spawnService,
  type ServiceProcess,
} from '../support/spawn-service';

/**
 * What the real process (src/main.ts, the default config) writes on stdout: JSON lines, a few
 * at start-up, one per refused call, the shutdown; pretty lines when a person asks for them.
 */

// Each test starts the service: minutes, so a loaded machine's slow start-up is not a failure.
const TEST_TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;
const CLOSE = { connection: 'close' };

describe('the service’s own output', () => {
  const children: ServiceProcess[] = [];

  afterEach(async () => {
    await killAll(children);
  });

  /** Starts the service, makes one refused call, stops it with SIGTERM; what it wrote, line by line. */
  async function runOnce(env: Record<string, string>): Promise<string[]> {
    const service = spawnService({ PORT: '0', ...env });
    children.push(service);
    const port = await listeningPort(service);
    const refused = await invoke(`http://127.0.0.1:${port}`, 'no_such_tool', {}, { ...CLOSE, 'x-call-id': 'c-404' });
    expect(refused.status).toBe(404);
    service.child.kill('SIGTERM');
    expect(await service.exited).toEqual({ code: 0, signal: null });
    return service
      .output()
      .split('\n')
      .filter((line) => line !== '');
  }

  it(
    'writes JSON lines only: a short start-up without Nest’s route mapping, the refused call, the shutdown',
    async () => {
      const lines = (await runOnce({})).map((line) => JSON.parse(line) as Record<string, unknown>);

      expect(lines.map((line) => line.context)).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^(RouterExplorer|RoutesResolver|InstanceLoader)$/)]),
      );
      expect(lines.map((line) => [line.level, line.event ?? line.msg])).toEqual([
        ['info', 'Starting Nest application...'],
        ['info', 'Nest application successfully started'],
        ['info', 'listening'],
        ['info', 'call'],
        ['info', 'shutdown'],
        ['info', 'shutdown'],
        ['info', 'shutdown'],
      ]);
      expect(lines[3]).toMatchObject({ callId: 'c-404', kind: 'not_found', tenant: 'anonymous', pool: 'isolated' });
      expect(lines[0]).toEqual(expect.objectContaining({ time: expect.any(Number), pid: expect.any(Number) }));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'writes lines for a person with LOG_FORMAT=pretty',
    async () => {
      const lines = await runOnce({ LOG_FORMAT: 'pretty' });

      expect(lines.some((line) => line.startsWith('{'))).toBe(false);
      expect(lines).toContainEqual(
        expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Bulkhead\] listening on http:\/\/127\.0\.0\.1:\d+/),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(/INFO: \[Bulkhead\] call refused \(not_found\) \{.*"callId":"c-404".*\}$/),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'says once that LOG_FORMAT is not understood, and writes JSON',
    async () => {
      const lines = (await runOnce({ LOG_FORMAT: 'xml' })).map((line) => JSON.parse(line) as Record<string, unknown>);

      expect(lines[0]).toMatchObject({ level: 'warn', event: 'logging', msg: expect.stringContaining('LOG_FORMAT') });
    },
    TEST_TIMEOUT_MS,
  );
});

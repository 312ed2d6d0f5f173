import { createServer, type Server } from 'node:net';
import { createServiceLogger } from '../../src/logging';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

// Every secret a call carries or the config holds; none may appear anywhere in the log.
const ACME = testTenant('acme', 'acme-api-key-secret-4d1f9a0b');
const PROVIDER_KEY = 'sk-provider-key-secret-8c2e';
const TOOL_HEADER_SECRET = 'tool-header-secret-77ab';
const ARGUMENT_SECRET = 'argument-secret-31f0';
const PROMPT_SECRET = 'prompt-secret-a9e4';
const UPSTREAM_BODY_SECRET = 'upstream-body-secret-0d6c';
const REASON_SECRET = 'containment-reason-secret-5e1b';
const UNKNOWN_TOOL_SECRET = 'tool-name-secret-2b7d';
const idempotencyKey = (n: number) => `idempotency-key-secret-${n}-f3c1`;
const SECRETS = [
  ACME.key,
  PROVIDER_KEY,
  TOOL_HEADER_SECRET,
  ARGUMENT_SECRET,
  PROMPT_SECRET,
  UPSTREAM_BODY_SECRET,
  REASON_SECRET,
  UNKNOWN_TOOL_SECRET,
  ADMIN_TOKEN,
  'idempotency-key-secret',
];

/** A port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the log: one JSON line per failed or refused call, never a secret', () => {
  let log: CapturedLog;
  let app: TestApp;
  let closed = false;
  let hung: Upstream;
  let failing: Upstream;
  let provider: Upstream;

  const asAcme = (n: number, callId: string) => ({
    ...ACME.headers,
    'idempotency-key': idempotencyKey(n),
    'x-call-id': callId,
  });
  const callLine = (callId: string) => log.events('call').filter((line) => line.callId === callId);

  async function start(level: 'warn' | 'log' | 'debug'): Promise<void> {
    log = new CapturedLog();
    closed = false;
    hung = await Upstream.start(() => new Promise<void>(() => undefined));
    failing = await Upstream.start(json(503, { detail: UPSTREAM_BODY_SECRET }));
    provider = await Upstream.start(json(500, { error: { message: UPSTREAM_BODY_SECRET } }));
    const refused = `http://127.0.0.1:${await closedPort()}/`;
    const once = { maxAttempts: 1 };
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey], adminToken: ADMIN_TOKEN },
        lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 2, queueCapacity: 2 } },
        budgets: { tenants: { acme: 0.5 } },
        tools: {
          echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
          paid: { lane: 'main', kind: 'builtin', builtin: 'echo', costUsd: 1 },
          slow: { lane: 'main', kind: 'http', url: hung.url('/'), timeoutMs: 100, retry: once },
          down: {
            lane: 'main',
            kind: 'http',
            url: refused,
            headers: { authorization: `Bearer ${TOOL_HEADER_SECRET}` },
            retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
          },
          broken: { lane: 'main', kind: 'http', url: failing.url('/'), retry: once },
          metadata: { lane: 'main', kind: 'http', url: 'http://169.254.169.254/latest/meta-data', retry: once },
        },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              targets: [{ provider: 'openai', model: 'gpt-test', baseUrl: provider.url('/v1'), apiKey: PROVIDER_KEY }],
              retry: { maxAttempts: 1 },
            },
          },
          prices: { 'openai/gpt-test': { inputPerMTokUsd: 0, outputPerMTokUsd: 0 } },
        },
      },
      { logger: createServiceLogger({ level, destination: log }) },
    );
  }

  /** Closes the app (unless the test did) and its upstreams. */
  async function stop(): Promise<void> {
    if (!closed) await app?.close();
    closed = true;
    await Promise.all([hung?.close(), failing?.close(), provider?.close()]);
  }

  afterEach(stop);

  /** The calls of every kind the issue found silent, each carrying secrets in its headers and arguments. */
  async function makeFailingCalls(): Promise<void> {
    const args = { query: ARGUMENT_SECRET };
    expect((await invoke(app.url, UNKNOWN_TOOL_SECRET, args, asAcme(1, 'c-unknown'))).status).toBe(404);
    expect((await invoke(app.url, 'slow', args, asAcme(2, 'c-timeout'))).status).toBe(504);
    expect((await invoke(app.url, 'down', args, asAcme(3, 'c-refused'))).status).toBe(502);
    expect((await invoke(app.url, 'broken', args, asAcme(4, 'c-upstream-503'))).status).toBe(502);
    expect((await invoke(app.url, 'metadata', args, asAcme(5, 'c-egress'))).status).toBe(403);
    expect((await invoke(app.url, 'paid', args, asAcme(6, 'c-budget'))).status).toBe(402);
    const chat = await send('POST', `${app.url}/v1/chat/completions`, {
      json: { model: 'chat', messages: [{ role: 'user', content: PROMPT_SECRET }] },
      headers: asAcme(7, 'c-llm'),
    });
    expect(chat.status).toBe(502);
    const badCallId = await invoke(app.url, 'echo', args, { ...ACME.headers, 'x-call-id': `bad ${ARGUMENT_SECRET}!` });
    expect(badCallId.status).toBe(400);
    expect((await send('POST', `${app.url}/v1/admin/circuits/echo/open`, { headers: AS_ADMIN })).status).toBe(200);
    expect((await invoke(app.url, 'echo', args, asAcme(8, 'c-open'))).status).toBe(503);
    expect((await send('POST', `${app.url}/v1/admin/circuits/echo/close`, { headers: AS_ADMIN })).status).toBe(200);
    expect((await invoke(app.url, 'echo', args, asAcme(9, 'c-ok'))).status).toBe(200);
  }

  it('writes one line per failed or refused call with its fields, at warn or log by the kind', async () => {
    await start('log');

    await makeFailingCalls();

    const expected: Array<[string, string, string, Partial<LogLine>]> = [
      ['c-unknown', 'info', 'not_found', { statusCode: 404, attempts: 0, route: 'POST /v1/tools/:toolId/invoke' }],
      ['c-timeout', 'warn', 'timeout', { tool: 'slow', lane: 'main', statusCode: 504, attempts: 1 }],
      ['c-refused', 'warn', 'transient', { tool: 'down', lane: 'main', statusCode: 502, attempts: 2 }],
      ['c-upstream-503', 'warn', 'transient', { tool: 'broken', statusCode: 502, attempts: 1 }],
      ['c-egress', 'warn', 'egress_denied', { tool: 'metadata', statusCode: 403, attempts: 1 }],
      ['c-budget', 'info', 'budget_exceeded', { tool: 'paid', statusCode: 402, attempts: 0 }],
      ['c-llm', 'warn', 'transient', { tool: 'llm.chat', lane: 'llm', statusCode: 502, attempts: 1 }],
      ['c-open', 'info', 'circuit_open', { tool: 'echo', lane: 'main', statusCode: 503, attempts: 0 }],
    ];
    for (const [callId, level, kind, fields] of expected) {
      const lines = callLine(callId);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        level,
        context: 'Bulkhead',
        event: 'call',
        callId,
        tenant: 'acme',
        pool: 'normal',
        kind,
        durationMs: expect.any(Number),
        ...fields,
      });
      expect(lines[0].msg).toBe(`call ${level === 'warn' ? 'failed' : 'refused'} (${kind})`);
    }
    // Refused before a call id was accepted: a line all the same, without the id it refused.
    const badCallId = log.events('request').filter((line) => line.kind === 'invalid_request');
    expect(badCallId).toEqual([
      expect.objectContaining({
        level: 'info',
        tenant: 'acme',
        statusCode: 400,
        route: 'POST /v1/tools/:toolId/invoke',
      }),
    ]);
    expect(badCallId[0]).not.toHaveProperty('callId');
    // A success is not written at `log`.
    expect(callLine('c-ok')).toEqual([]);
    // Nothing a line says came from the caller but validated ids: not the unknown tool's name.
    expect(log.events('call').map((line) => Object.keys(line).sort())).not.toContainEqual(
      expect.arrayContaining(['arguments']),
    );
  });

  it('writes breaker transitions and containment changes, without the operator’s reason', async () => {
    await start('log');

    await makeFailingCalls();
    const contained = await send('PUT', `${app.url}/v1/admin/containment/acme`, {
      json: { state: 'active', posture: 'degraded', reason: REASON_SECRET },
      headers: AS_ADMIN,
    });
    expect(contained.status).toBe(200);

    expect(log.events('breaker')).toEqual([
      expect.objectContaining({ level: 'warn', breaker: 'echo', state: 'open', msg: 'breaker echo open' }),
      expect.objectContaining({ level: 'info', breaker: 'echo', state: 'closed', msg: 'breaker echo closed' }),
    ]);
    expect(log.events('containment')).toEqual([
      expect.objectContaining({ level: 'info', tenant: 'acme', state: 'active', posture: 'degraded', version: 2 }),
    ]);
  });

  it('never writes a secret: keys, tokens, arguments, prompts, bodies, idempotency keys, unknown names', async () => {
    await start('debug');

    await makeFailingCalls();
    await send('PUT', `${app.url}/v1/admin/containment/acme`, {
      json: { state: 'active', reason: REASON_SECRET },
      headers: AS_ADMIN,
    });

    expect(log.lines.length).toBeGreaterThan(10);
    for (const secret of SECRETS) expect(log.text).not.toContain(secret);
  });

  it('honours the level: debug adds successes and Nest’s route lines, warn leaves out refusals', async () => {
    await start('debug');
    await makeFailingCalls();
    expect(callLine('c-ok')).toEqual([
      expect.objectContaining({
        level: 'debug',
        msg: 'call ok',
        kind: 'ok',
        statusCode: 200,
        tool: 'echo',
        attempts: 1,
      }),
    ]);
    expect(log.lines.filter((line) => line.context === 'RouterExplorer').length).toBeGreaterThan(10);
    await stop();

    await start('warn');
    await makeFailingCalls();
    expect(log.events('call').map((line) => line.callId)).toEqual([
      'c-timeout',
      'c-refused',
      'c-upstream-503',
      'c-egress',
      'c-llm',
    ]);
    expect(log.lines.every((line) => line.level === 'warn' || line.level === 'error')).toBe(true);
  });

  it('says nothing of Nest’s route mapping at log: the start-up is a few lines', async () => {
    await start('log');

    const startup = log.lines.map((line) => line.context);
    expect(startup).not.toContain('RouterExplorer');
    expect(startup).not.toContain('RoutesResolver');
    expect(startup).not.toContain('InstanceLoader');
    expect(log.lines.length).toBeLessThanOrEqual(3);
  });

  it('writes a line for a failing call that finishes while the service drains', async () => {
    await start('log');
    const call = invoke(app.url, 'slow', {}, asAcme(10, 'c-draining'));
    await eventually(() => expect(hung.requests).toHaveLength(1));

    const closing = stop();
    expect((await call).status).toBe(504);
    await closing;

    expect(callLine('c-draining')).toEqual([expect.objectContaining({ level: 'warn', kind: 'timeout' })]);
    expect(log.events('shutdown').map((line) => line.msg)).toEqual([
      expect.stringMatching(/^shutting down: admission stopped/),
      'drained: every accepted call finished',
    ]);
  });
});

import { createHash, createHmac } from 'node:crypto';
import { createServiceLogger } from '../../src/logging';
import { canonicalJson } from '../../src/idempotency';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke } from '../support/http-client';
import { closeAll, connectMcp, type McpConnection } from '../mcp/mcp-client';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';

const ACME = testTenant('acme', 'acme-api-key-secret-6b0e');
const GLOBEX = testTenant('globex', 'globex-api-key-secret-1c9d');
const ARGUMENT_SECRET = 'argument-secret-audit-8f2a';
const HEADER_SECRET = 'tool-header-secret-audit-3e71';
const URL_SECRET = 'url-secret-audit-5d04';
const AUDIT_KEY = 'audit-hmac-key-secret-0123456789';

/**
 * The audit trail of tool calls (docs/operations.md, "Audit trail"): one line per call of an
 * audited tool, REST or MCP, whatever its outcome, with who, what, where and how it ended, and of
 * the arguments only a digest that matches for the same arguments in any key order.
 */
describe('the audit trail of tool calls', () => {
  let log: CapturedLog;
  let app: TestApp;
  let upstream: Upstream;
  const connections: McpConnection[] = [];

  async function start(audit: Record<string, unknown>, tools: Record<string, Record<string, unknown>>) {
    log = new CapturedLog();
    app = await createTestApp(
      {
        auth: { apiKeys: [ACME.apiKey, GLOBEX.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 } },
        budgets: { tenants: { globex: 0 } },
        audit,
        tools,
      },
      { logger: createServiceLogger({ level: 'log', destination: log }) },
    );
  }

  beforeEach(async () => {
    upstream = await Upstream.start(json(200, { found: true }));
  });

  afterEach(async () => {
    await closeAll(connections);
    await app?.close();
    await upstream?.close();
  });

  const auditLines = () => log.events('audit');
  const lineOf = async (callId: string): Promise<LogLine> => {
    await eventually(() => expect(auditLines().filter((line) => line.callId === callId)).toHaveLength(1));
    return auditLines().find((line) => line.callId === callId)!;
  };

  it('writes who called which tool where, how it ended, and only a digest of the arguments', async () => {
    await start(
      { argumentsKey: AUDIT_KEY },
      {
        lookup: {
          lane: 'main',
          kind: 'http',
          url: `${upstream.url('/')}?token=${URL_SECRET}`,
          headers: { authorization: `Bearer ${HEADER_SECRET}` },
          audit: true,
        },
        paid: { lane: 'main', kind: 'builtin', builtin: 'echo', costUsd: 1, audit: true },
        echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
      },
    );
    const args = { query: ARGUMENT_SECRET, page: 2 };

    expect((await invoke(app.url, 'lookup', args, { ...ACME.headers, 'x-call-id': 'audit-ok' })).status).toBe(200);
    expect((await invoke(app.url, 'paid', args, { ...GLOBEX.headers, 'x-call-id': 'audit-refused' })).status).toBe(402);
    expect((await invoke(app.url, 'echo', args, { ...ACME.headers, 'x-call-id': 'not-audited' })).status).toBe(200);

    const digest = createHmac('sha256', AUDIT_KEY).update(canonicalJson(args)).digest('hex');
    expect(await lineOf('audit-ok')).toMatchObject({
      level: 'info',
      msg: 'tool call',
      tenant: 'acme',
      tool: 'lookup',
      toolKind: 'http',
      upstream: new URL(upstream.url('/')).origin,
      lane: 'main',
      pool: 'normal',
      transport: 'http',
      outcome: 'ok',
      statusCode: 200,
      attempts: 1,
      replayed: false,
      argumentsDigest: digest,
    });
    // A refusal is audited as well: who tried what matters most when it was not allowed.
    expect(await lineOf('audit-refused')).toMatchObject({
      tenant: 'globex',
      tool: 'paid',
      toolKind: 'builtin',
      outcome: 'budget_exceeded',
      statusCode: 402,
      argumentsDigest: digest,
    });
    expect((await lineOf('audit-refused')).upstream).toBeUndefined();
    expect(auditLines().filter((line) => line.callId === 'not-audited')).toEqual([]);
    for (const secret of [ARGUMENT_SECRET, HEADER_SECRET, URL_SECRET, AUDIT_KEY, ACME.key, GLOBEX.key]) {
      expect(log.text).not.toContain(secret);
    }
  });

  it('audits every tool with audit.toolCalls, calls over MCP too, but a tool that opts out', async () => {
    await start(
      { toolCalls: true },
      {
        echo: { lane: 'main', kind: 'builtin', builtin: 'echo' },
        quiet: { lane: 'main', kind: 'builtin', builtin: 'echo', audit: false },
      },
    );
    const mcp = await connectMcp(app.url, ACME.headers);
    connections.push(mcp);

    await mcp.client.callTool({ name: 'echo', arguments: { b: 1, a: ARGUMENT_SECRET } });
    await mcp.client.callTool({ name: 'quiet', arguments: { a: 1 } });
    expect((await invoke(app.url, 'echo', { a: ARGUMENT_SECRET, b: 1 }, ACME.headers)).status).toBe(200);

    await eventually(() => expect(auditLines()).toHaveLength(2));
    const [overMcp, overRest] = auditLines();
    expect(overMcp).toMatchObject({ tool: 'echo', transport: 'mcp', outcome: 'ok', tenant: 'acme' });
    expect(overRest).toMatchObject({ tool: 'echo', transport: 'http', outcome: 'ok' });
    // No key: a plain SHA-256, the same for the same arguments in another order.
    const digest = createHash('sha256')
      .update(canonicalJson({ a: ARGUMENT_SECRET, b: 1 }))
      .digest('hex');
    expect(overMcp.argumentsDigest).toBe(digest);
    expect(overRest.argumentsDigest).toBe(digest);
    expect(log.text).not.toContain(ARGUMENT_SECRET);
  });
});

import { Injectable, Module } from '@nestjs/common';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Tool, type ToolArguments } from '../../src/index';
import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, PLATFORMS, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { eventOf, getLanes } from '../support/service-reads';
import { testTenant } from '../support/tenants';
import { closeAll, connectMcp, type McpConnection } from './mcp-client';

const ACME = testTenant('acme');
const KEYED = { 'io.bulkhead/idempotency-key': 'mcp-key-1' };

/** A company's `@Tool` with an input schema, beside the config's tools. */
@Injectable()
class Lookups {
  @Tool('lookup', {
    lane: 'main',
    description: 'looks a customer up',
    inputSchema: {
      type: 'object',
      properties: { customer: { type: 'string', minLength: 1 } },
      required: ['customer'],
      additionalProperties: false,
    },
  })
  lookup(args: ToolArguments) {
    return { customer: args.customer, plan: 'gold' };
  }
}

@Module({ providers: [Lookups] })
class LookupsModule {}

const SEARCH_SCHEMA = {
  type: 'object',
  properties: { query: { type: 'string' } },
  required: ['query'],
};

const CONFIG = {
  auth: { apiKeys: [ACME.apiKey] },
  lanes: { main: { concurrency: 4, queueCapacity: 4 }, render: { concurrency: 1, queueCapacity: 0 } },
  tools: {
    echo: { lane: 'main', kind: 'builtin', builtin: 'echo', description: 'returns its arguments' },
    wait: { lane: 'main', kind: 'builtin', builtin: 'delay', idempotent: true },
    render: { lane: 'render', kind: 'builtin', builtin: 'delay' },
    secret: { lane: 'main', kind: 'builtin', builtin: 'echo', containment: 'deny' },
    search: { lane: 'main', kind: 'http', url: 'http://127.0.0.1:9/search', inputSchema: SEARCH_SCHEMA },
  },
};

/** A `tools/call` result as the SDK client hands it over. */
interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, any>;
}

describe.each(PLATFORMS)('MCP tools: tools/list and tools/call through the pipeline, on %s', (platform) => {
  let clock: FakeClock;
  let app: TestApp | undefined;
  const connections: McpConnection[] = [];

  async function connect(headers: Record<string, string> = ACME.headers): Promise<McpConnection> {
    const connection = await connectMcp(app!.url, headers);
    connections.push(connection);
    return connection;
  }

  beforeEach(async () => {
    clock = new FakeClock();
    app = await createTestApp(CONFIG, { platform, clock, imports: [LookupsModule] });
  });

  afterEach(async () => {
    await closeAll(connections);
    await closeOnFakeClock(app, clock);
    app = undefined;
  });

  it('lists the registry with each tool’s input schema, and says so for a tool without one', async () => {
    const { client } = await connect();

    const { tools } = await client.listTools();

    expect(tools.map((tool) => tool.name).sort()).toEqual(['echo', 'lookup', 'render', 'search', 'secret', 'wait']);
    expect(tools.find((tool) => tool.name === 'wait')).toMatchObject({
      inputSchema: {
        type: 'object',
        properties: { ms: { type: 'integer', minimum: 0, maximum: 600_000 } },
        required: ['ms'],
      },
      annotations: { idempotentHint: true },
    });
    expect(tools.find((tool) => tool.name === 'echo')).toMatchObject({
      description: 'returns its arguments',
      inputSchema: { type: 'object', description: expect.stringMatching(/declares no input schema/) },
    });
  });

  it('shows and holds to the input schemas of a @Tool and an http tool of the config', async () => {
    const { client } = await connect();

    const { tools } = await client.listTools();
    const lookupRefused = (await client.callTool({ name: 'lookup', arguments: { customer: '' } })) as ToolResult;
    const lookup = (await client.callTool({ name: 'lookup', arguments: { customer: 'c-1' } })) as ToolResult;
    const searchRefused = (await client.callTool({ name: 'search', arguments: { q: 'x' } })) as ToolResult;

    expect(tools.find((tool) => tool.name === 'lookup')).toMatchObject({
      description: 'looks a customer up',
      inputSchema: { type: 'object', required: ['customer'] },
    });
    expect(tools.find((tool) => tool.name === 'search')?.inputSchema).toEqual(SEARCH_SCHEMA);
    expect(lookupRefused.structuredContent).toMatchObject({
      error: { kind: 'schema', message: 'arguments.customer must NOT have fewer than 1 characters' },
    });
    expect(lookup.structuredContent).toMatchObject({ result: { customer: 'c-1', plan: 'gold' } });
    // Refused before the call went anywhere: nothing listens on the search tool's URL.
    expect(searchRefused.structuredContent).toMatchObject({
      error: { kind: 'schema', message: "arguments must have required property 'query'", attempts: 0 },
    });
  });

  it('leaves containment: deny tools out of a contained caller’s list', async () => {
    const anonymous = await connect({});

    const { tools } = await anonymous.client.listTools();

    expect(tools.map((tool) => tool.name).sort()).toEqual(['echo', 'lookup', 'render', 'search', 'wait']);
  });

  it('answers a call with the tool’s result as text and the success body as structuredContent', async () => {
    const { client } = await connect();

    const result = (await client.callTool({ name: 'echo', arguments: { hello: 'world' } })) as ToolResult;

    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: '{"hello":"world"}' }]);
    expect(result.structuredContent).toEqual({
      callId: expect.any(String),
      toolId: 'echo',
      lane: 'main',
      pool: 'normal',
      result: { hello: 'world' },
      attempts: 1,
      durationMs: expect.any(Number),
      replayed: false,
    });
    const event = await eventOf(app!.url, result.structuredContent!.callId);
    expect(event).toBeUndefined(); // acme's events are not anonymous's
    const own = await send('GET', `${app!.url}/v1/events`, { headers: ACME.headers });
    expect(own.body.events.at(-1)).toMatchObject({
      callId: result.structuredContent!.callId,
      toolId: 'echo',
      lane: 'main',
      tenant: 'acme',
      status: 'ok',
    });
  });

  it('answers a refusal of the pipeline as an isError result carrying the envelope', async () => {
    const { client } = await connect();

    const result = (await client.callTool({ name: 'wait', arguments: { ms: 'soon' } })) as ToolResult;

    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'arguments.ms must be an integer from 0 to 600000' }]);
    expect(result.structuredContent).toEqual({
      error: {
        kind: 'schema',
        message: 'arguments.ms must be an integer from 0 to 600000',
        attempts: 0,
        jsonrpcCode: -32602,
      },
      callId: expect.any(String),
      toolId: 'wait',
    });
  });

  it('refuses a call to a full lane with queue_full and its retryAfterMs, while the lane keeps its running call', async () => {
    const { client } = await connect();
    const running = client.callTool({ name: 'render', arguments: { ms: 5_000 } });
    await expectLane('render', { active: 1, waiting: 0 });

    const refused = (await client.callTool({ name: 'render', arguments: { ms: 1 } })) as ToolResult;

    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      error: { kind: 'queue_full', attempts: 0, jsonrpcCode: -32006, retryAfterMs: 1_000 },
      toolId: 'render',
    });
    expect(refused.content[0].text).toMatch(/^lane 'render' is full/);
    await clock.advanceAsync(5_000);
    expect(((await running) as ToolResult).structuredContent).toMatchObject({ result: { waitedMs: 5_000 } });
  });

  it('answers an unknown tool with a JSON-RPC error: the envelope’s jsonrpcCode, the envelope as data', async () => {
    const { client } = await connect();

    const error = await client.callTool({ name: 'nope', arguments: {} }).then(
      () => undefined,
      (reason: unknown) => reason,
    );

    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({
      code: -32601,
      data: { error: { kind: 'not_found', message: "unknown tool 'nope'", jsonrpcCode: -32601 } },
    });
  });

  it('answers a malformed request with a JSON-RPC error and runs nothing', async () => {
    const { client } = await connect();

    const badKey = await client
      .callTool({ name: 'echo', arguments: {}, _meta: { 'io.bulkhead/idempotency-key': 'has space' } })
      .catch((reason: unknown) => reason);
    const badArguments = await client
      .request({ method: 'tools/call', params: { name: 'echo', arguments: [1, 2] } } as never, CallToolResultSchema)
      .catch((reason: unknown) => reason);

    expect(badKey).toMatchObject({
      code: -32600,
      data: { error: { kind: 'invalid_request', jsonrpcCode: -32600 }, toolId: 'echo' },
    });
    expect((badKey as Error).message).not.toContain('has space');
    expect(badArguments).toMatchObject({
      code: -32600,
      data: { error: { kind: 'invalid_request', message: 'tools/call: params.arguments must be a JSON object' } },
    });
    const own = await send('GET', `${app!.url}/v1/events`, { headers: ACME.headers });
    expect(own.body.events).toEqual([]);
  });

  it('replays a call with the same idempotency key in _meta', async () => {
    const { client } = await connect();

    const first = (await client.callTool({ name: 'echo', arguments: { n: 1 }, _meta: KEYED })) as ToolResult;
    const second = (await client.callTool({ name: 'echo', arguments: { n: 1 }, _meta: KEYED })) as ToolResult;
    const conflict = (await client.callTool({ name: 'echo', arguments: { n: 2 }, _meta: KEYED })) as ToolResult;

    expect(first.structuredContent).toMatchObject({ result: { n: 1 }, replayed: false });
    expect(second.structuredContent).toMatchObject({ result: { n: 1 }, replayed: true, attempts: 1 });
    expect(second.structuredContent!.callId).not.toBe(first.structuredContent!.callId);
    expect(conflict.structuredContent).toMatchObject({ error: { kind: 'idempotency_conflict' } });
  });

  it('shares the keyed outcome with the REST route: the same key replays across transports', async () => {
    const { client } = await connect();
    await client.callTool({ name: 'echo', arguments: { n: 3 }, _meta: KEYED });

    const rest = await send('POST', `${app!.url}/v1/tools/echo/invoke`, {
      json: { arguments: { n: 3 } },
      headers: { ...ACME.headers, 'idempotency-key': 'mcp-key-1' },
    });

    expect(rest.body).toMatchObject({ result: { n: 3 }, replayed: true });
  });

  it('counts calls in bulkhead_calls_total with transport="mcp", beside the REST route’s "http"', async () => {
    const { client } = await connect();
    await client.callTool({ name: 'echo', arguments: {} });
    await client.callTool({ name: 'echo', arguments: {} });
    await send('POST', `${app!.url}/v1/tools/echo/invoke`, { json: { arguments: {} }, headers: ACME.headers });

    const prom = parsePromText((await send('GET', `${app!.url}/metrics`)).body as string);

    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'echo', outcome: 'ok', transport: 'mcp' })).toBe(2);
    expect(sampleValue(prom, 'bulkhead_calls_total', { tool: 'echo', outcome: 'ok', transport: 'http' })).toBe(1);
    expect(sampleValue(prom, 'bulkhead_call_duration_seconds_count', { tool: 'echo', outcome: 'ok' })).toBe(3);
  });

  async function expectLane(name: string, expected: { active: number; waiting: number }): Promise<void> {
    await eventually(async () => expect((await getLanes(app!.url))[name]).toMatchObject(expected));
  }
});

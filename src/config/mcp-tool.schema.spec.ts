import { type ConfigResult, parseConfig } from './config.loader';
import { problemsOf } from '../../test/support/config-results';

const URL = 'https://mcp.example.com/mcp';

function document(tools: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { lanes: { io: { concurrency: 2, queueCapacity: 2 } }, tools, ...extra };
}

function toolOf(result: ConfigResult, id: string) {
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.config.tools[id];
}

describe('config: tools of kind mcp', () => {
  it('takes one upstream tool, with the defaults of a config tool', () => {
    const tool = toolOf(
      parseConfig(document({ search: { kind: 'mcp', lane: 'io', url: URL, tool: 'web_search' } }), {}),
      'search',
    );

    expect(tool).toEqual({
      kind: 'mcp',
      lane: 'io',
      url: URL,
      tool: 'web_search',
      timeoutMs: 30_000,
      idempotent: false,
      containment: 'allow',
      maxResponseBytes: 1024 * 1024,
      isError: 'failure',
      retryIsError: false,
      session: 'per-tenant',
      pinning: 'enforce',
    });
  });

  it.each([
    ['an isError result as bad input, in one session per pool', { isError: 'bad_input', session: 'per-pool' }],
    ['isError results retried', { isError: 'failure', retryIsError: true }],
    ['retryIsError from ${ENV}', { retryIsError: 'true' }, { retryIsError: true }],
  ])('takes %s', (_label, entry, parsed: Record<string, unknown> = entry) => {
    const tool = toolOf(
      parseConfig(document({ x: { kind: 'mcp', lane: 'io', url: URL, tool: 'a', ...entry } }), {}),
      'x',
    );

    expect(tool).toMatchObject(parsed);
  });

  it.each([
    ["'*'", '*'],
    ['a list', ['create_issue', 'list_issues']],
  ])('imports a server’s tools named by %s', (_label, tools) => {
    const tool = toolOf(parseConfig(document({ gh: { kind: 'mcp', lane: 'io', url: URL, tools } }), {}), 'gh');

    expect(tool).toMatchObject({ kind: 'mcp', tools });
  });

  it('substitutes ${ENV} in headers, and takes the other settings of a tool', () => {
    const entry = {
      kind: 'mcp',
      lane: 'io',
      url: URL,
      tool: 'search',
      headers: { authorization: 'Bearer ${SEARCH_TOKEN}' },
      timeoutMs: 5_000,
      idempotent: true,
      containment: 'deny',
      costUsd: 0.01,
      retry: { maxAttempts: 2 },
      breaker: { volumeThreshold: 5 },
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    };

    const tool = toolOf(parseConfig(document({ search: entry }), { SEARCH_TOKEN: 's3cret' }), 'search');

    expect(tool).toMatchObject({ ...entry, headers: { authorization: 'Bearer s3cret' } });
  });

  it.each([
    [
      'neither tool nor tools',
      {},
      ["tools.x.tool: needs exactly one of tool (one upstream tool) or tools ('*' or a list, imported as <id>.<name>)"],
    ],
    [
      'both tool and tools',
      { tool: 'a', tools: ['b'] },
      ["tools.x.tool: needs exactly one of tool (one upstream tool) or tools ('*' or a list, imported as <id>.<name>)"],
    ],
    [
      'an inputSchema for imported tools',
      { tools: '*', inputSchema: { type: 'object' } },
      ['tools.x.inputSchema: is only for one tool (tool:); imported tools take the upstream server’s schemas'],
    ],
    [
      'a tool name MCP does not allow',
      { tool: 'a b' },
      ['tools.x.tool: must be 1-128 letters, digits, "_", "-" or "." (an MCP tool name)'],
    ],
    ['tools that are neither * nor a list', { tools: 'all' }, ["tools.x.tools: must be '*' or a list of tool names"]],
    ['an empty list', { tools: [] }, ['tools.x.tools: must name at least one tool']],
    ['a name listed twice', { tools: ['a', 'a'] }, ['tools.x.tools: names a tool twice']],
    [
      'a header the MCP transport sets',
      { tool: 'a', headers: { 'Mcp-Session-Id': 'mine' } },
      ['tools.x.headers.Mcp-Session-Id: is set by Bulkhead and cannot be configured'],
    ],
    [
      'a url that is not http',
      { tool: 'a', url: 'stdio://server' },
      ['tools.x.url: must be an absolute http:// or https:// URL'],
    ],
    ['an unknown key', { tool: 'a', command: 'npx server' }, ['tools.x.command: unknown key']],
    [
      'an unknown isError meaning',
      { tool: 'a', isError: 'ignore' },
      ['tools.x.isError: must be one of failure, bad_input'],
    ],
    [
      'retryIsError that is not a boolean',
      { tool: 'a', retryIsError: 'often' },
      ['tools.x.retryIsError: must be true or false'],
    ],
    [
      'retryIsError for results that mean bad input',
      { tool: 'a', isError: 'bad_input', retryIsError: true },
      ['tools.x.retryIsError: is only for isError: failure (a bad_input result is never retried)'],
    ],
    ['an unknown session', { tool: 'a', session: 'shared' }, ['tools.x.session: must be one of per-tenant, per-pool']],
  ])('refuses %s', (_label, entry, problems) => {
    const result = parseConfig(document({ x: { kind: 'mcp', lane: 'io', url: URL, ...entry } }), {});

    expect(problemsOf(result)).toEqual(problems);
  });

  it('refuses an imported id longer than a tool id, or one another entry already has', () => {
    const long = 'n'.repeat(62);
    const result = parseConfig(
      document({
        gh: { kind: 'mcp', lane: 'io', url: URL, tools: ['issues', long] },
        'gh.issues': { kind: 'builtin', builtin: 'echo', lane: 'io' },
      }),
      {},
    );

    expect(problemsOf(result)).toEqual([
      "tools.gh.tools[0]: registers 'gh.issues', which is already the id of tools.gh.issues",
      `tools.gh.tools[1]: registers 'gh.${long}', longer than a tool id may be (64 characters)`,
    ]);
  });

  it('refuses a breaker named like an imported tool, and an unknown lane', () => {
    const result = parseConfig(
      document({ gh: { kind: 'mcp', lane: 'nope', url: URL, tools: ['issues'] } }, { breakers: { 'gh.issues': {} } }),
      {},
    );

    expect(problemsOf(result)).toEqual([
      "breakers.gh.issues: is the breaker of tool 'gh.issues': set it under tools.gh.breaker",
      "tools.gh.lane: unknown lane 'nope' (lanes: io)",
    ]);
  });

  describe('pinning', () => {
    const HASH = 'ab'.repeat(32);

    it.each(['off', 'warn', 'enforce'])('takes pinning: %s', (pinning) => {
      const tool = toolOf(
        parseConfig(document({ x: { kind: 'mcp', lane: 'io', url: URL, tools: '*', pinning } }), {}),
        'x',
      );

      expect(tool).toMatchObject({ pinning });
    });

    it('takes pins by the tools’ names on the server', () => {
      const tool = toolOf(
        parseConfig(document({ x: { kind: 'mcp', lane: 'io', url: URL, tools: ['a', 'b'], pins: { a: HASH } } }), {}),
        'x',
      );

      expect(tool).toMatchObject({ pinning: 'enforce', pins: { a: HASH } });
    });

    it('says what is wrong with a pin, a mode, or pins the entry cannot use', () => {
      const result = parseConfig(
        document({
          short: { kind: 'mcp', lane: 'io', url: URL, tool: 'a', pins: { a: 'abc123' } },
          upper: { kind: 'mcp', lane: 'io', url: URL, tool: 'a', pins: { a: HASH.toUpperCase() } },
          other: { kind: 'mcp', lane: 'io', url: URL, tools: ['a'], pins: { b: HASH } },
          off: { kind: 'mcp', lane: 'io', url: URL, tools: '*', pinning: 'off', pins: { a: HASH } },
          mode: { kind: 'mcp', lane: 'io', url: URL, tools: '*', pinning: 'strict' },
          list: { kind: 'mcp', lane: 'io', url: URL, tools: '*', pins: [HASH] },
        }),
        {},
      );

      expect(problemsOf(result)).toEqual([
        'tools.short.pins.a: must be a sha256: 64 lowercase hex digits',
        'tools.upper.pins.a: must be a sha256: 64 lowercase hex digits',
        'tools.other.pins.b: pins a tool the entry does not import',
        'tools.off.pins: needs pinning: warn or enforce',
        'tools.mode.pinning: must be one of off, warn, enforce',
        'tools.list.pins: must be a mapping',
      ]);
    });
  });
});

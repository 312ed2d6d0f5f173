import { resolve } from 'node:path';
import { configPath, loadConfigFile, parseConfig } from './config.loader';
import { configOf, problemsOf } from '../../test/support/config-results';

const DEFAULT_CONFIG = resolve(__dirname, '../../config/default.yaml');
const fixture = (name: string) => resolve(__dirname, '../../test/fixtures/config', name);

const NAME_RULE = 'must be 1-64 letters, digits, "_", "-" or ".", starting with a letter or digit';

/** The smallest valid document, with `extra` merged in at the top level. */
function document(extra: Record<string, unknown> = {}) {
  return { lanes: { render: { concurrency: 1, queueCapacity: 2 } }, ...extra };
}

function withRenderLane(lane: Record<string, unknown>) {
  return { lanes: { render: { concurrency: 1, queueCapacity: 2, ...lane } } };
}

function withTool(tool: Record<string, unknown>) {
  return document({ tools: { x: { lane: 'render', ...tool } } });
}

describe('config loader', () => {
  describe('config/default.yaml', () => {
    it('loads with an empty environment', () => {
      expect(loadConfigFile(DEFAULT_CONFIG, {}).ok).toBe(true);
    });

    it('has the lanes as written, with queueTtlMs filled in where absent', () => {
      expect(configOf(loadConfigFile(DEFAULT_CONFIG, {})).lanes).toEqual({
        render: { concurrency: 1, queueCapacity: 2, queueTtlMs: 30000, maxQueuedPerTenant: 2 },
        notes: { concurrency: 1, queueCapacity: 1, queueTtlMs: 30000 },
        general: { concurrency: 16, queueCapacity: 64, queueTtlMs: 10000 },
        llm: { concurrency: 8, queueCapacity: 32, queueTtlMs: 30000 },
      });
    });

    it('has the tools as written, with timeoutMs, idempotent and containment defaults filled in', () => {
      const defaults = { idempotent: false, containment: 'allow' };

      expect(configOf(loadConfigFile(DEFAULT_CONFIG, {})).tools).toEqual({
        echo: {
          ...defaults,
          lane: 'general',
          kind: 'builtin',
          builtin: 'echo',
          timeoutMs: 30000,
          description: 'returns its arguments',
        },
        read_notes: {
          ...defaults,
          lane: 'notes',
          kind: 'builtin',
          builtin: 'echo',
          timeoutMs: 30000,
          description: 'stands in for a quick notes service',
        },
        render_preview: {
          ...defaults,
          lane: 'render',
          kind: 'builtin',
          builtin: 'delay',
          timeoutMs: 60000,
          description: 'stands in for a slow renderer: waits { "ms": n } milliseconds',
        },
        wait: {
          ...defaults,
          lane: 'general',
          kind: 'builtin',
          builtin: 'delay',
          timeoutMs: 60000,
          description: 'waits { "ms": n } milliseconds',
        },
      });
    });

    it('has the server, auth, store and examples settings as written', () => {
      const config = configOf(loadConfigFile(DEFAULT_CONFIG, {}));

      expect(config.server).toMatchObject({ port: 3000, bodyLimitBytes: 1048576, shutdownDrainMs: 10000 });
      expect(config.auth.allowAnonymous).toBe(true);
      expect(config.store).toEqual({ kind: 'memory' });
      expect(config.examples).toBe(true);
    });

    it('has no admin token when BULKHEAD_ADMIN_TOKEN is unset', () => {
      const { auth } = configOf(loadConfigFile(DEFAULT_CONFIG, {}));

      expect(auth.adminToken).toBeUndefined();
      expect(Object.hasOwn(auth, 'adminToken')).toBe(false);
    });

    it('takes the admin token from BULKHEAD_ADMIN_TOKEN', () => {
      const config = configOf(
        loadConfigFile(DEFAULT_CONFIG, { BULKHEAD_ADMIN_TOKEN: 'an-admin-token-of-32-characters!' }),
      );

      expect(config.auth.adminToken).toBe('an-admin-token-of-32-characters!');
    });

    it('takes the port from PORT', () => {
      expect(configOf(loadConfigFile(DEFAULT_CONFIG, { PORT: '8080' })).server.port).toBe(8080);
    });
  });

  describe('defaults', () => {
    it('fills in server, store, lane and tool defaults for a minimal document', () => {
      const config = configOf(parseConfig(withTool({ kind: 'code' }), {}));

      expect(config.server).toEqual({
        port: 3000,
        host: '0.0.0.0',
        bodyLimitBytes: 1048576,
        shutdownDrainMs: 10000,
        warmUpMs: 3000,
        onUnhandledRejection: 'serve',
        requestTimeoutMs: 30000,
        connectionTimeoutMs: 10000,
        maxConnections: 1024,
        logLevel: 'log',
      });
      expect(config.store).toEqual({ kind: 'memory' });
      expect(config.lanes.render).toEqual({ concurrency: 1, queueCapacity: 2, queueTtlMs: 30000 });
      // A code tool's entry overrides only what it sets: the rest comes from its @Tool decorator.
      expect(config.tools.x).toEqual({ lane: 'render', kind: 'code' });
      expect(config.auth).toEqual({ allowAnonymous: false, apiKeys: [], allowedOrigins: [], allowedHosts: [] });
      expect(config.containment.pools).toEqual({
        normalMaxConcurrency: 32,
        isolatedMaxConcurrency: 2,
        pooledConnectionLifetimeMs: 300000,
        timeoutMs: 30000,
      });
    });

    it('fills in the http tool method and response limit', () => {
      expect(
        configOf(parseConfig(withTool({ kind: 'http', url: 'https://renderer.internal/render' }), {})).tools.x,
      ).toMatchObject({
        method: 'POST',
        maxResponseBytes: 1048576,
      });
    });
  });

  describe('problems', () => {
    it.each([0, 4097, 1.5, 'abc', true, null, ''])(
      'reports concurrency %p as one line naming the key path',
      (concurrency) => {
        expect(problemsOf(parseConfig(withRenderLane({ concurrency }), {}))).toEqual([
          'lanes.render.concurrency: must be an integer from 1 to 4096',
        ]);
      },
    );

    it.each([1, 4096, '4'])('accepts concurrency %p', (concurrency) => {
      expect(configOf(parseConfig(withRenderLane({ concurrency }), {})).lanes.render.concurrency).toBe(
        Number(concurrency),
      );
    });

    it.each([-1, 100001])('reports queueCapacity %p', (queueCapacity) => {
      expect(problemsOf(parseConfig(withRenderLane({ queueCapacity }), {}))).toEqual([
        'lanes.render.queueCapacity: must be an integer from 0 to 100000',
      ]);
    });

    it('accepts a queueCapacity of 0 (no waiting)', () => {
      expect(configOf(parseConfig(withRenderLane({ queueCapacity: 0 }), {})).lanes.render.queueCapacity).toBe(0);
    });

    it('reports a misspelt lane key as unknown, alongside the key it should have been', () => {
      const problems = problemsOf(parseConfig({ lanes: { render: { concurency: 1, queueCapacity: 2 } } }, {}));

      expect(problems).toContain('lanes.render.concurency: unknown key');
      expect(problems).toContain('lanes.render.concurrency: is required');
      expect(problems).toHaveLength(2);
    });

    it('reports an unknown top-level key', () => {
      expect(problemsOf(parseConfig(document({ lane: {} }), {}))).toEqual(['lane: unknown key']);
    });

    it('says where a key that is read no more went: budgets.prices is llm.prices', () => {
      const prices = { 'gpt-x': { inputPer1kUsd: 0.001, outputPer1kUsd: 0.002 } };

      expect(problemsOf(parseConfig(document({ budgets: { prices } }), {}))).toEqual([
        "budgets.prices: unknown key (LLM prices are llm.prices (USD per million tokens, by provider/model); a tool's price is its costUsd)",
      ]);
    });

    it('reports an unknown key in a nested section', () => {
      expect(problemsOf(parseConfig(document({ server: { prot: 3000 } }), {}))).toEqual(['server.prot: unknown key']);
    });

    it('reports a key that belongs to another tool kind as unknown', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'builtin', builtin: 'echo', url: 'http://a/' }), {}))).toEqual([
        'tools.x.url: unknown key',
      ]);
    });

    it('reports a tool whose lane does not exist, listing the lanes', () => {
      const doc = {
        lanes: { render: { concurrency: 1, queueCapacity: 2 }, notes: { concurrency: 1, queueCapacity: 1 } },
        tools: { x: { lane: 'nope', kind: 'code' } },
      };

      expect(problemsOf(parseConfig(doc, {}))).toEqual(["tools.x.lane: unknown lane 'nope' (lanes: render, notes)"]);
    });

    it('reports every tool whose lane does not exist', () => {
      const doc = document({ tools: { x: { lane: 'nope', kind: 'code' }, y: { lane: 'gone', kind: 'code' } } });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        "tools.x.lane: unknown lane 'nope' (lanes: render)",
        "tools.y.lane: unknown lane 'gone' (lanes: render)",
      ]);
    });

    it('does not check tool lanes when the lanes section is missing', () => {
      expect(problemsOf(parseConfig({ tools: { x: { lane: 'nope', kind: 'code' } } }, {}))).toEqual([
        'lanes: is required',
      ]);
    });

    it('reports an unknown lane together with a lane that is missing a required key', () => {
      const doc = { lanes: { render: { concurrency: 1 } }, tools: { x: { lane: 'nope', kind: 'code' } } };

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'lanes.render.queueCapacity: is required',
        "tools.x.lane: unknown lane 'nope' (lanes: render)",
      ]);
    });

    it('reports an unknown lane together with the problems of other tools', () => {
      const doc = document({
        tools: { x: { lane: 'rendr', kind: 'code' }, y: { lane: 'render', kind: 'http', url: 'ftp://a/' } },
      });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        expect.stringMatching(/^tools\.y\.url: /),
        "tools.x.lane: unknown lane 'rendr' (lanes: render)",
      ]);
    });

    it('reports a breaker named like a tool together with the other problems', () => {
      const doc = document({
        lanes: { render: { concurrency: 0, queueCapacity: 1 } },
        tools: { x: { lane: 'render', kind: 'code' } },
        breakers: { x: { volumeThreshold: 3 } },
      });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'lanes.render.concurrency: must be an integer from 1 to 4096',
        "breakers.x: is the breaker of tool 'x': set it under tools.x.breaker",
      ]);
    });

    it.each(['bad name', '_render', 'a'.repeat(65)])('reports the lane name %p', (laneName) => {
      expect(problemsOf(parseConfig({ lanes: { [laneName]: { concurrency: 1, queueCapacity: 2 } } }, {}))).toEqual([
        `lanes.${laneName}: invalid name: ${NAME_RULE}`,
      ]);
    });

    it('reports a bad tool name', () => {
      expect(problemsOf(parseConfig(document({ tools: { 'a b': { lane: 'render', kind: 'code' } } }), {}))).toEqual([
        `tools.a b: invalid name: ${NAME_RULE}`,
      ]);
    });

    it('reports an http tool without a url', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'http' }), {}))).toEqual(['tools.x.url: is required']);
    });

    it('reports an http tool with an ftp:// url', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'http', url: 'ftp://files.example/render' }), {}))).toEqual([
        'tools.x.url: must be an absolute http:// or https:// URL',
      ]);
    });

    it('reports an http tool with a relative url', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'http', url: '/render' }), {}))).toEqual([
        'tools.x.url: must be an absolute http:// or https:// URL',
      ]);
    });

    it('reports a builtin tool with an unknown builtin', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'builtin', builtin: 'sleep' }), {}))).toEqual([
        'tools.x.builtin: must be one of echo, delay',
      ]);
    });

    it('reports an unknown tool kind', () => {
      expect(problemsOf(parseConfig(withTool({ kind: 'grpc' }), {}))).toEqual([
        'tools.x.kind: must be one of http, builtin, code, mcp',
      ]);
    });

    it('reports an unknown store kind', () => {
      expect(problemsOf(parseConfig(document({ store: { kind: 'etcd' } }), {}))).toEqual([
        'store.kind: must be one of memory, redis',
      ]);
    });

    it('reports a redis store with a non-redis url', () => {
      expect(problemsOf(parseConfig(document({ store: { kind: 'redis', url: 'http://cache:6379' } }), {}))).toEqual([
        'store.url: must be a redis:// or rediss:// URL',
      ]);
    });

    it('accepts a redis store and fills in its prefix and command timeout', () => {
      expect(
        configOf(parseConfig(document({ store: { kind: 'redis', url: 'redis://127.0.0.1:6379' } }), {})).store,
      ).toEqual({
        kind: 'redis',
        url: 'redis://127.0.0.1:6379',
        prefix: 'bh:',
        commandTimeoutMs: 500,
      });
    });

    it('accepts a Redis Cluster and a primary behind Sentinel, with the password from the environment', () => {
      const env = { REDIS_PASSWORD: 'from-the-env' };
      const clustered = document({
        store: {
          kind: 'redis',
          cluster: {
            nodes: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379'],
            natMap: { '10.0.0.1:6379': 'localhost:7001' },
          },
          password: '${REDIS_PASSWORD}',
          tls: true,
        },
      });
      const watched = document({
        store: { kind: 'redis', sentinel: { name: 'mymaster', nodes: ['redis://10.0.0.5:26379'] } },
      });

      expect(configOf(parseConfig(clustered, env)).store).toEqual({
        kind: 'redis',
        cluster: {
          nodes: ['redis://10.0.0.1:6379', 'redis://10.0.0.2:6379'],
          natMap: { '10.0.0.1:6379': 'localhost:7001' },
          scaleReads: 'master',
        },
        password: 'from-the-env',
        tls: true,
        prefix: 'bh:',
        commandTimeoutMs: 500,
      });
      expect(configOf(parseConfig(watched, {})).store).toMatchObject({
        sentinel: { name: 'mymaster', nodes: ['redis://10.0.0.5:26379'], role: 'master' },
      });
    });

    it('reports a redis store with none, or more than one, of url, cluster and sentinel', () => {
      const none = document({ store: { kind: 'redis' } });
      const two = document({
        store: { kind: 'redis', url: 'redis://a:6379', sentinel: { name: 'm', nodes: ['redis://s:26379'] } },
      });

      expect(problemsOf(parseConfig(none, {}))).toEqual(['store: needs one of url, cluster, sentinel']);
      expect(problemsOf(parseConfig(two, {}))).toEqual([
        'store: takes one of url, cluster, sentinel, not url and sentinel',
      ]);
    });

    it('reports a Sentinel role other than the primary, and a cluster without nodes', () => {
      const replica = document({
        store: { kind: 'redis', sentinel: { name: 'm', nodes: ['redis://s:26379'], role: 'slave' } },
      });
      const empty = document({ store: { kind: 'redis', cluster: { nodes: [] } } });

      expect(problemsOf(parseConfig(replica, {}))).toEqual([
        'store.sentinel.role: must be master: decisions write, which replicas refuse',
      ]);
      expect(problemsOf(parseConfig(empty, {}))).toEqual(['store.cluster.nodes: must name a node']);
    });

    it('reports isolatedMaxConcurrency above normalMaxConcurrency', () => {
      const doc = document({ containment: { pools: { normalMaxConcurrency: 2, isolatedMaxConcurrency: 3 } } });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'containment.pools.isolatedMaxConcurrency: must not exceed normalMaxConcurrency',
      ]);
    });

    it('accepts isolatedMaxConcurrency equal to normalMaxConcurrency', () => {
      const doc = document({ containment: { pools: { normalMaxConcurrency: 3, isolatedMaxConcurrency: 3 } } });

      expect(parseConfig(doc, {}).ok).toBe(true);
    });

    it('reports maxQueuedPerTenant above queueCapacity', () => {
      expect(problemsOf(parseConfig(withRenderLane({ queueCapacity: 2, maxQueuedPerTenant: 3 }), {}))).toEqual([
        'lanes.render.maxQueuedPerTenant: must not exceed queueCapacity',
      ]);
    });

    it('names what is wrong with an adaptive lane: its algorithm, its bounds, a start outside them', () => {
      const lane = (adaptive: object, concurrency = 4) => withRenderLane({ concurrency, queueCapacity: 2, adaptive });
      expect(problemsOf(parseConfig(lane({ algorithm: 'gradient3', min: 1, max: 8 }), {}))).toEqual([
        'lanes.render.adaptive.algorithm: must be one of gradient2, vegas, aimd',
      ]);
      expect(problemsOf(parseConfig(lane({ algorithm: 'vegas', min: 8, max: 2 }), {}))).toEqual([
        'lanes.render.adaptive.max: must be at least adaptive.min',
        'lanes.render.concurrency: an adaptive lane starts at concurrency: it must be from adaptive.min to adaptive.max',
      ]);
      expect(problemsOf(parseConfig(lane({ algorithm: 'aimd', min: 1, max: 8, backoffRatio: 1 }), {}))).toEqual([
        'lanes.render.adaptive.backoffRatio: must be a number from 0.5 to 0.99',
      ]);
      expect(
        configOf(parseConfig(lane({ algorithm: 'gradient2', min: 1, max: 8 }, 8), {})).lanes.render.adaptive,
      ).toEqual({ algorithm: 'gradient2', min: 1, max: 8 });
    });

    it('accepts maxQueuedPerTenant equal to queueCapacity', () => {
      expect(
        configOf(parseConfig(withRenderLane({ queueCapacity: 2, maxQueuedPerTenant: 2 }), {})).lanes.render
          .maxQueuedPerTenant,
      ).toBe(2);
    });

    it('reports a document without lanes', () => {
      expect(problemsOf(parseConfig({ server: { port: 3000 } }, {}))).toEqual(['lanes: is required']);
    });

    it('reports an empty lanes section', () => {
      expect(problemsOf(parseConfig({ lanes: {} }, {}))).toEqual(['lanes: must define at least one lane']);
    });

    it('reports a lanes section that is a list', () => {
      expect(problemsOf(parseConfig({ lanes: [] }, {}))).toEqual(['lanes: must be a mapping']);
    });

    it('reports a document that is not a mapping', () => {
      expect(problemsOf(parseConfig(['lanes'], {}))).toEqual(['(root): must be a mapping']);
    });

    it('reports several problems as several lines', () => {
      const doc = {
        server: { port: 'x' },
        lanes: { render: { concurrency: 0, queueCapacity: -1, extra: 1 } },
        bogus: 1,
      };

      const problems = problemsOf(parseConfig(doc, {}));

      expect(problems).toEqual(
        expect.arrayContaining([
          'server.port: must be an integer from 0 to 65535',
          'lanes.render.concurrency: must be an integer from 1 to 4096',
          'lanes.render.queueCapacity: must be an integer from 0 to 100000',
          'lanes.render.extra: unknown key',
          'bogus: unknown key',
        ]),
      );
      expect(problems).toHaveLength(5);
      for (const problem of problems) expect(problem).not.toContain('\n');
    });
  });

  describe('retries, breakers and idempotency', () => {
    it('leaves retry and breaker settings a tool does not set to the built-in defaults (absent here)', () => {
      const tool = configOf(parseConfig(withTool({ kind: 'builtin', builtin: 'echo' }), {})).tools.x!;
      expect(tool.retry).toBeUndefined();
      expect(tool.breaker).toBeUndefined();
    });

    it('keeps the retry settings a tool sets, budget included', () => {
      const retry = { maxAttempts: 5, baseDelayMs: 50, deadlineMs: 9000, budget: { percent: 10 } };
      const tool = configOf(parseConfig(withTool({ kind: 'builtin', builtin: 'echo', retry }), {})).tools.x!;
      expect(tool.retry).toEqual(retry);
    });

    it('reports maxDelayMs below baseDelayMs', () => {
      const retry = { baseDelayMs: 500, maxDelayMs: 100 };
      expect(problemsOf(parseConfig(withTool({ kind: 'builtin', builtin: 'echo', retry }), {}))).toEqual([
        'tools.x.retry.maxDelayMs: must be at least baseDelayMs',
      ]);
    });

    it('reports out-of-range retry and breaker settings under their key paths', () => {
      const tool = {
        kind: 'builtin',
        builtin: 'echo',
        retry: { maxAttempts: 0, budget: { percent: 101 } },
        breaker: { errorThresholdPercentage: 0, resetTimeoutMs: 5 },
      };
      expect(problemsOf(parseConfig(withTool(tool), {})).sort()).toEqual([
        'tools.x.breaker.errorThresholdPercentage: must be an integer from 1 to 100',
        'tools.x.breaker.resetTimeoutMs: must be an integer from 100 to 3600000',
        'tools.x.retry.budget.percent: must be an integer from 0 to 100',
        'tools.x.retry.maxAttempts: must be an integer from 1 to 10',
      ]);
    });

    it('accepts named breakers and a default for all of them', () => {
      const breakers = { default: { volumeThreshold: 20 }, 'render-api': { resetTimeoutMs: 5000 } };
      expect(configOf(parseConfig(document({ breakers }), {})).breakers).toEqual(breakers);
    });

    it('keeps the slow-call, probe and backoff settings of a breaker', () => {
      const breaker = {
        slowCallDurationMs: 2_000,
        slowCallRatePercentage: 80,
        halfOpenProbes: 3,
        backoffMultiplier: 1.5,
        resetTimeoutMs: 10_000,
        maxResetTimeoutMs: 120_000,
      };
      const tool = configOf(parseConfig(withTool({ kind: 'builtin', builtin: 'echo', breaker }), {})).tools.x!;
      expect(tool.breaker).toEqual(breaker);
    });

    it('reports out-of-range slow-call, probe and backoff settings under their key paths', () => {
      const breakers = {
        a: { slowCallDurationMs: 0, slowCallRatePercentage: 0, halfOpenProbes: 1.5, backoffMultiplier: 0.5 },
        b: { slowCallRatePercentage: 101, halfOpenProbes: 0, resetTimeoutMs: 10_000, maxResetTimeoutMs: 5_000 },
      };
      expect(problemsOf(parseConfig(document({ breakers }), {})).sort()).toEqual([
        'breakers.a.backoffMultiplier: must be a number from 1 to 100',
        'breakers.a.halfOpenProbes: must be an integer from 1 to 1000',
        'breakers.a.slowCallDurationMs: must be an integer from 1 to 600000',
        'breakers.a.slowCallRatePercentage: must be an integer from 1 to 100',
        'breakers.b.halfOpenProbes: must be an integer from 1 to 1000',
        'breakers.b.maxResetTimeoutMs: must be at least resetTimeoutMs',
        'breakers.b.slowCallRatePercentage: must be an integer from 1 to 100',
      ]);
    });

    it("refuses a named breaker that is a tool's own, pointing at where to set it", () => {
      const doc = document({
        tools: { x: { lane: 'render', kind: 'builtin', builtin: 'echo' } },
        breakers: { x: { volumeThreshold: 3 } },
      });
      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        "breakers.x: is the breaker of tool 'x': set it under tools.x.breaker",
      ]);
    });

    it('fills in the idempotency retention and bounds', () => {
      expect(configOf(parseConfig(document(), {})).idempotency).toEqual({
        retentionMs: 60_000,
        maxEntries: 10_000,
        maxBytes: 64 * 1024 * 1024,
        maxBytesPerTenant: 16 * 1024 * 1024,
        maxEntryBytes: 1024 * 1024,
      });
    });

    it('reports idempotency byte bounds that do not nest: an entry within a tenant within the whole', () => {
      const idempotency = { maxBytes: 1_000, maxBytesPerTenant: 2_000, maxEntryBytes: 3_000 };
      expect(problemsOf(parseConfig(document({ idempotency }), {}))).toEqual([
        'idempotency.maxBytesPerTenant: must not exceed maxBytes',
        'idempotency.maxEntryBytes: must not exceed maxBytesPerTenant',
      ]);
    });

    it('reports an idempotency retention under a second', () => {
      expect(problemsOf(parseConfig(document({ idempotency: { retentionMs: 10 } }), {}))).toEqual([
        'idempotency.retentionMs: must be an integer from 1000 to 86400000',
      ]);
    });
  });

  describe('identity and containment', () => {
    it("refuses 'anonymous' as a configured tenant", () => {
      const auth = { apiKeys: [{ sha256: 'a'.repeat(64), tenant: 'anonymous' }] };
      expect(problemsOf(parseConfig(document({ auth }), {}))).toEqual([
        "auth.apiKeys.0.tenant: 'anonymous' is the tenant of callers without a key; it cannot be configured",
      ]);
    });

    it('refuses an egress CIDR it cannot read, and accepts IPv4 and IPv6 ones', () => {
      const egress = (allowPrivateCidrs: string[]) => document({ containment: { egress: { allowPrivateCidrs } } });
      expect(problemsOf(parseConfig(egress(['10.0.0.0/8', '127.0.0.1']), {}))).toEqual([
        'containment.egress.allowPrivateCidrs.1: must be a CIDR such as 10.0.0.0/8 or fd00::/8',
      ]);
      expect(parseConfig(egress(['10.0.0.0/8', 'fd00::/8', '127.0.0.1/32']), {}).ok).toBe(true);
    });
  });

  describe('${ENV} substitution', () => {
    it('turns a substituted number into a number in a numeric field', () => {
      const doc = { lanes: { render: { concurrency: '${C}', queueCapacity: '${Q}' } } };

      expect(configOf(parseConfig(doc, { C: '4', Q: '0' })).lanes.render).toMatchObject({
        concurrency: 4,
        queueCapacity: 0,
      });
    });

    it('turns a substituted true or false into a boolean', () => {
      expect(configOf(parseConfig(document({ examples: '${EXAMPLES}' }), { EXAMPLES: 'true' })).examples).toBe(true);
    });

    it('reports a substituted value that is out of range under its key path', () => {
      const doc = { lanes: { render: { concurrency: '${C}', queueCapacity: 2 } } };

      expect(problemsOf(parseConfig(doc, { C: '5000' }))).toEqual([
        'lanes.render.concurrency: must be an integer from 1 to 4096',
      ]);
    });

    it('leaves adminToken absent when BULKHEAD_ADMIN_TOKEN is unset', () => {
      const { auth } = configOf(parseConfig(document({ auth: { adminToken: '${BULKHEAD_ADMIN_TOKEN}' } }), {}));

      expect(Object.hasOwn(auth, 'adminToken')).toBe(false);
    });

    it('leaves adminToken absent when BULKHEAD_ADMIN_TOKEN is empty', () => {
      const doc = document({ auth: { adminToken: '${BULKHEAD_ADMIN_TOKEN}' } });

      expect(Object.hasOwn(configOf(parseConfig(doc, { BULKHEAD_ADMIN_TOKEN: '' })).auth, 'adminToken')).toBe(false);
    });

    it('lets an absent key take its schema default', () => {
      expect(configOf(parseConfig(document({ server: { port: '${APP_PORT}' } }), {})).server.port).toBe(3000);
    });

    it('uses ${VAR:-default} when the variable is unset', () => {
      const doc = { lanes: { render: { concurrency: '${C:-8}', queueCapacity: 2 } } };

      expect(configOf(parseConfig(doc, {})).lanes.render.concurrency).toBe(8);
    });

    it('substitutes a variable inside a longer string', () => {
      const doc = withTool({ kind: 'http', url: 'http://${RENDER_HOST}:9000/render' });

      expect(configOf(parseConfig(doc, { RENDER_HOST: 'renderer' })).tools.x).toMatchObject({
        url: 'http://renderer:9000/render',
      });
    });

    it('reports an unset variable inside a longer string under its key path', () => {
      const doc = withTool({ kind: 'http', url: 'http://${RENDER_HOST}:9000/render' });

      expect(problemsOf(parseConfig(doc, {}))).toEqual(['tools.x.url: environment variable RENDER_HOST is not set']);
    });

    it('reads $${ as a literal ${', () => {
      const doc = withTool({ kind: 'code', description: 'costs $${PRICE}' });

      expect(configOf(parseConfig(doc, { PRICE: '1' })).tools.x.description).toBe('costs ${PRICE}');
    });

    it('keeps a substituted value containing ": " or a newline a string', () => {
      const doc = withTool({ kind: 'code', description: '${D}' });

      expect(configOf(parseConfig(doc, { D: 'kind: http\nurl: ftp://x' })).tools.x).toMatchObject({
        kind: 'code',
        description: 'kind: http\nurl: ftp://x',
      });
    });
  });

  describe('PORT', () => {
    it('overrides server.port', () => {
      expect(configOf(parseConfig(document({ server: { port: 3000 } }), { PORT: '8080' })).server.port).toBe(8080);
    });

    it('sets server.port when the file has no server section', () => {
      expect(configOf(parseConfig(document(), { PORT: '8080' })).server.port).toBe(8080);
    });

    it('keeps the other server settings', () => {
      const config = configOf(
        parseConfig(document({ server: { port: 3000, bodyLimitBytes: 2048 } }), { PORT: '8080' }),
      );

      expect(config.server).toMatchObject({ port: 8080, bodyLimitBytes: 2048 });
    });

    it('is ignored when empty', () => {
      expect(configOf(parseConfig(document({ server: { port: 4000 } }), { PORT: '' })).server.port).toBe(4000);
    });

    it.each(['abc', '70000', '-1', '1.5'])('reports PORT=%p as a server.port problem', (port) => {
      expect(problemsOf(parseConfig(document(), { PORT: port }))).toEqual([
        'server.port: must be an integer from 0 to 65535 (from PORT)',
      ]);
    });
  });

  describe('BULKHEAD_WARM_UP_MS', () => {
    it('overrides server.warmUpMs beside PORT, which still applies', () => {
      const config = configOf(
        parseConfig(document({ server: { warmUpMs: 5000 } }), { BULKHEAD_WARM_UP_MS: '0', PORT: '8080' }),
      );

      expect(config.server).toMatchObject({ warmUpMs: 0, port: 8080 });
    });

    it('leaves the default of three seconds when unset', () => {
      expect(configOf(parseConfig(document(), {})).server.warmUpMs).toBe(3000);
    });

    it('reports a bad value as a server.warmUpMs problem naming the variable', () => {
      expect(problemsOf(parseConfig(document(), { BULKHEAD_WARM_UP_MS: 'soon' }))).toEqual([
        'server.warmUpMs: must be an integer from 0 to 60000 (from BULKHEAD_WARM_UP_MS)',
      ]);
    });
  });

  describe('loadConfigFile', () => {
    it('reports a missing file as one problem naming the path', () => {
      const path = fixture('does-not-exist.yaml');

      expect(problemsOf(loadConfigFile(path, {}))).toEqual([`${path}: cannot read the config file (ENOENT)`]);
    });

    it('reports invalid YAML as one line naming the path and the position', () => {
      const path = fixture('invalid-yaml.yaml');

      const problems = problemsOf(loadConfigFile(path, {}));

      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^.*invalid-yaml\.yaml: not valid YAML: .*line \d+, column \d+/);
      expect(problems[0]).not.toContain('\n');
    });

    it('rejects duplicate keys', () => {
      const problems = problemsOf(loadConfigFile(fixture('duplicate-keys.yaml'), {}));

      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/duplicate-keys\.yaml: not valid YAML: .*unique.*line 4/);
    });

    it('reports an empty file as missing its lanes', () => {
      expect(problemsOf(loadConfigFile(fixture('empty.yaml'), {}))).toEqual(['lanes: is required']);
    });

    it('reports a file of comments as missing its lanes', () => {
      expect(problemsOf(loadConfigFile(fixture('comments-only.yaml'), {}))).toEqual(['lanes: is required']);
    });

    it('reports an unquoted ${VAR} inside a flow mapping as invalid YAML', () => {
      const problems = problemsOf(loadConfigFile(fixture('env-unquoted-in-flow.yaml'), { RENDER_CONCURRENCY: '4' }));

      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain('env-unquoted-in-flow.yaml: not valid YAML: ');
    });

    it('substitutes the environment into the file', () => {
      const env = {
        APP_PORT: '8081',
        BULKHEAD_ADMIN_TOKEN: 'an-admin-token-of-32-characters!',
        RENDER_CONCURRENCY: '4',
        RENDER_HOST: 'renderer',
        RENDER_DESCRIPTION: 'kind: builtin\nbuiltin: echo',
      };

      const config = configOf(loadConfigFile(fixture('env.yaml'), env));

      expect(config.server.port).toBe(8081);
      expect(config.auth.adminToken).toBe('an-admin-token-of-32-characters!');
      expect(config.lanes.render.concurrency).toBe(4);
      expect(config.tools.render_preview).toMatchObject({
        kind: 'http',
        url: 'http://renderer:9000/render',
        description: 'kind: builtin\nbuiltin: echo',
      });
    });

    it('uses defaults and drops unset whole values in the file', () => {
      const config = configOf(
        loadConfigFile(fixture('env.yaml'), { RENDER_CONCURRENCY: '2', RENDER_HOST: 'renderer' }),
      );

      expect(config.server.port).toBe(3000);
      expect(Object.hasOwn(config.auth, 'adminToken')).toBe(false);
      expect(Object.hasOwn(config.tools.render_preview, 'description')).toBe(false);
    });

    it('reports an unset variable in the file under its key path', () => {
      expect(problemsOf(loadConfigFile(fixture('env.yaml'), { RENDER_CONCURRENCY: '2' }))).toEqual([
        'tools.render_preview.url: environment variable RENDER_HOST is not set',
      ]);
    });
  });

  describe('config/full.example.yaml', () => {
    it('is a valid config that sets every section', () => {
      const path = resolve(__dirname, '../../config/full.example.yaml');
      const config = configOf(loadConfigFile(path, { BULKHEAD_ADMIN_TOKEN: 'an-admin-token-of-32-characters!' }));

      expect(config.auth.adminToken).toBe('an-admin-token-of-32-characters!');
      expect(config.tools.render_preview).toMatchObject({ kind: 'http', headers: { authorization: 'Bearer ' } });
      expect(Object.keys(config)).toEqual(expect.arrayContaining(['rateLimits', 'budgets', 'containment', 'llm']));
    });
  });

  describe('configPath', () => {
    it('is config/default.yaml when BULKHEAD_CONFIG is unset or empty', () => {
      expect(configPath({})).toBe('config/default.yaml');
      expect(configPath({ BULKHEAD_CONFIG: '' })).toBe('config/default.yaml');
    });

    it('is BULKHEAD_CONFIG when set', () => {
      expect(configPath({ BULKHEAD_CONFIG: '/etc/bulkhead/prod.yaml' })).toBe('/etc/bulkhead/prod.yaml');
    });
  });

  describe('regressions', () => {
    it('reports an invalid lane name once, not again as an unknown lane', () => {
      const doc = document({ tools: { x: { lane: 'bad name', kind: 'code' } } });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([`tools.x.lane: ${NAME_RULE}`]);
    });

    it('does not list unknown lanes when no lane is defined at all', () => {
      expect(problemsOf(parseConfig({ lanes: {}, tools: { x: { lane: 'nope', kind: 'code' } } }, {}))).toEqual([
        'lanes: must define at least one lane',
      ]);
    });

    it('takes the default of ${VAR:-default} inside a string when VAR is empty', () => {
      const doc = withTool({ kind: 'http', url: 'http://${H:-localhost}:9000/' });

      expect(configOf(parseConfig(doc, { H: '' })).tools.x).toMatchObject({ url: 'http://localhost:9000/' });
    });

    it('still reports a broken server section when PORT is set', () => {
      expect(problemsOf(parseConfig(document({ server: 'x' }), { PORT: '1' }))).toEqual(['server: must be a mapping']);
    });

    it('reports the other problems beside an unset variable', () => {
      const doc = { ...withRenderLane({ concurrency: 0 }), store: { kind: 'redis', url: 'redis://${H}:1' } };

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'store.url: environment variable H is not set',
        'lanes.render.concurrency: must be an integer from 1 to 4096',
      ]);
    });

    it('reports a variable missing twice in one value once', () => {
      const doc = document({ store: { kind: 'redis', url: 'redis://${H}:${P}/${P}' } });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'store.url: environment variable H is not set',
        'store.url: environment variable P is not set',
      ]);
    });

    it('names the unset variable behind a required value', () => {
      const doc = withRenderLane({ concurrency: '${C}' });

      expect(problemsOf(parseConfig(doc, {}))).toEqual([
        'lanes.render.concurrency: is required (environment variable C is not set)',
      ]);
    });

    it.each(['Content-Type', 'x-call-id', 'X-Call-Id', 'Host', 'Idempotency-Key'])(
      'refuses %s among an http tool headers, in any letter case',
      (header) => {
        const doc = withTool({ kind: 'http', url: 'http://127.0.0.1:9000/', headers: { [header]: 'forged' } });

        expect(problemsOf(parseConfig(doc, {}))).toEqual([
          `tools.x.headers.${header}: is set by Bulkhead and cannot be configured`,
        ]);
      },
    );

    it('refuses a header value with a line break and a header name with a space', () => {
      const doc = withTool({
        kind: 'http',
        url: 'http://127.0.0.1:9000/',
        headers: { authorization: 'a\r\nx-injected: 1', 'bad name': 'v' },
      });

      expect(problemsOf(parseConfig(doc, {}))).toEqual(
        expect.arrayContaining([
          'tools.x.headers.authorization: must not contain line breaks',
          'tools.x.headers.bad name: invalid name: must be a valid HTTP header name',
        ]),
      );
    });

    it('says a missing tool kind is required', () => {
      expect(problemsOf(parseConfig(withTool({}), {}))).toEqual(['tools.x.kind: is required']);
    });

    it('says a tool written as a plain value must be a mapping', () => {
      expect(problemsOf(parseConfig(document({ tools: { x: 'render' } }), {}))).toEqual(['tools.x: must be a mapping']);
    });
  });
});

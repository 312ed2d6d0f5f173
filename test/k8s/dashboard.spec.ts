import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { parsePromText, type PromText, samplesOf } from '../support/prom-text';
import { testTenant } from '../support/tenants';
import { json, Upstream } from '../support/upstream';
import { UpstreamMcpServer } from '../mcp/upstream-mcp-server';

const DIR = join(resolve(__dirname, '../..'), 'k8s', 'dashboards');
const DASHBOARD_FILE = 'bulkhead.json';

interface Target {
  refId?: string;
  expr?: string;
  datasource?: { type?: string; uid?: string };
}
interface Panel {
  type: string;
  title?: string;
  description?: string;
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: Target[];
  datasource?: { type?: string; uid?: string };
}
interface Variable {
  name: string;
  type: string;
  query?: string | { query: string };
}
interface Dashboard {
  schemaVersion: number;
  uid: string;
  panels: Panel[];
  templating: { list: Variable[] };
}

const dashboard = JSON.parse(readFileSync(join(DIR, DASHBOARD_FILE), 'utf8')) as Dashboard;
const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
const variables = dashboard.templating.list;

/** Every PromQL expression of the dashboard, named for the test output. */
const expressions: Array<[string, string]> = [
  ...panels.flatMap((panel) =>
    (panel.targets ?? []).map(
      (target) => [`panel "${panel.title}" ${target.refId}`, target.expr ?? ''] as [string, string],
    ),
  ),
  ...variables
    .filter((variable) => variable.type === 'query')
    .map((variable) => {
      const query = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
      return [`variable $${variable.name}`, query] as [string, string];
    }),
];

// ---------------------------------------------------------------------------------------------
// A small PromQL reader: enough to find the metric names, label matchers and grouping labels of
// the expressions a dashboard uses. It refuses what it does not understand rather than skip it,
// so a construct it cannot read fails the test instead of hiding a name from it.

const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
]);
const FUNCTIONS = new Set([
  'abs',
  'absent',
  'absent_over_time',
  'avg_over_time',
  'ceil',
  'changes',
  'clamp',
  'clamp_max',
  'clamp_min',
  'count_over_time',
  'delta',
  'deriv',
  'exp',
  'floor',
  'histogram_count',
  'histogram_quantile',
  'histogram_sum',
  'idelta',
  'increase',
  'irate',
  'label_join',
  'label_replace',
  'last_over_time',
  'ln',
  'log2',
  'log10',
  'max_over_time',
  'min_over_time',
  'predict_linear',
  'quantile_over_time',
  'rate',
  'resets',
  'round',
  'scalar',
  'sort',
  'sort_desc',
  'sqrt',
  'stddev_over_time',
  'sum_over_time',
  'time',
  'timestamp',
  'vector',
]);
const GROUPING = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['bool', 'offset', 'and', 'or', 'unless', 'atan2', 'inf', 'nan']);
/**
 * Labels Prometheus adds to every series of a target when it scrapes (the job, the instance,
 * and the pod's namespace and name from Kubernetes service discovery), never in the app's text.
 */
const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod']);
/** Grafana's interval variables, replaced by a duration before the expression is read. */
const GRAFANA_INTERVALS = /\$(?:__rate_interval|__interval|__range)\b|\$\{(?:__rate_interval|__interval|__range)\}/g;

const TOKEN =
  /\s+|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|\d+(?:\.\d+)?(?:e[+-]?\d+)?[a-z]*|[a-zA-Z_:][a-zA-Z0-9_:]*|=~|!~|!=|==|>=|<=|[-+*/%^(){}[\],=<>@]/y;

interface Selector {
  name: string;
  labels: string[];
  /** Followed by a range, as in `rate(x[5m])`. */
  ranged: boolean;
}
interface Reading {
  selectors: Selector[];
  /** Labels of by/without/on/ignoring/group_left/group_right clauses. */
  grouping: string[];
}

function tokenize(expr: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (!match) throw new Error(`cannot read PromQL at "${expr.slice(at, at + 20)}" in: ${expr}`);
    if (match[0].trim() !== '') tokens.push(match[0]);
  }
  return tokens;
}

const isIdentifier = (token: string | undefined) => token !== undefined && /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(token);

/** The metric selectors and grouping labels of a PromQL expression (or of a Grafana label_values query). */
function readPromQl(source: string): Reading {
  const grouping: string[] = [];
  let expr = source.replace(GRAFANA_INTERVALS, '5m');
  // Grafana's label_values(selector, label): the label must exist on the selected metric.
  const labelValues = /^\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*$/s.exec(expr);
  if (labelValues) {
    expr = labelValues[1];
    grouping.push(labelValues[2]);
  }
  const tokens = tokenize(expr);
  const selectors: Selector[] = [];
  let index = 0;
  const expect = (token: string) => {
    if (tokens[index] !== token) throw new Error(`expected "${token}" at token ${index} of: ${source}`);
    index++;
  };
  while (index < tokens.length) {
    const token = tokens[index];
    const next = tokens[index + 1];
    if (token === '{') throw new Error(`a selector without a metric name in: ${source}`);
    if (!isIdentifier(token)) {
      index++;
      continue;
    }
    if (GROUPING.has(token)) {
      index++;
      // group_left and group_right may stand without a label list.
      if (tokens[index] !== '(') continue;
      expect('(');
      while (tokens[index] !== ')') {
        if (!isIdentifier(tokens[index])) throw new Error(`not a label in a grouping of: ${source}`);
        grouping.push(tokens[index++]);
        if (tokens[index] === ',') index++;
      }
      expect(')');
      continue;
    }
    if (KEYWORDS.has(token.toLowerCase())) {
      index++;
      continue;
    }
    if (next === '(') {
      if (!FUNCTIONS.has(token) && !AGGREGATIONS.has(token)) throw new Error(`unknown function ${token} in: ${source}`);
      index++;
      continue;
    }
    if (AGGREGATIONS.has(token) && (next === 'by' || next === 'without')) {
      index++;
      continue;
    }
    const selector: Selector = { name: token, labels: [], ranged: false };
    index++;
    if (tokens[index] === '{') {
      index++;
      while (tokens[index] !== '}') {
        const label = tokens[index++];
        const operator = tokens[index++];
        const value = tokens[index++];
        if (!isIdentifier(label) || !['=', '!=', '=~', '!~'].includes(operator) || !/^["'`]/.test(value ?? '')) {
          throw new Error(`unreadable label matcher ${label} ${operator} ${value} in: ${source}`);
        }
        selector.labels.push(label);
        if (tokens[index] === ',') index++;
      }
      expect('}');
    }
    selector.ranged = tokens[index] === '[';
    selectors.push(selector);
  }
  return { selectors, grouping };
}

// ---------------------------------------------------------------------------------------------

const HISTOGRAM_PART = /^(.*)_(bucket|sum|count)$/;

/** The histogram a `_bucket`, `_sum` or `_count` series belongs to, if it is one. */
function histogramOf(prom: PromText, name: string): string | undefined {
  const part = HISTOGRAM_PART.exec(name);
  return part && prom.types.get(part[1]) === 'histogram' ? part[1] : undefined;
}

/** What is wrong with an expression against a real scrape: names, labels, ranges over gauges. */
function problemsOf(expr: string, prom: PromText): string[] {
  const problems: string[] = [];
  const { selectors, grouping } = readPromQl(expr);
  if (selectors.length === 0) problems.push('names no metric');
  const labelsOf = (name: string) => new Set(samplesOf(prom, name).flatMap((sample) => Object.keys(sample.labels)));
  const known = new Set(TARGET_LABELS);
  for (const { name, labels, ranged } of selectors) {
    const histogram = histogramOf(prom, name);
    if (samplesOf(prom, name).length === 0) {
      problems.push(
        prom.types.has(histogram ?? name)
          ? `${name} is exported but had no sample, so its labels cannot be checked: exercise it in the test app`
          : `${name} is not a metric the app exports`,
      );
      continue;
    }
    const present = labelsOf(name);
    for (const label of present) known.add(label);
    for (const label of labels) {
      if (!present.has(label) && !TARGET_LABELS.has(label)) problems.push(`${name} has no label ${label}`);
    }
    // rate(), increase() and friends over a gauge answer nonsense without an error.
    const type = histogram ? 'histogram' : prom.types.get(name);
    if (ranged && type !== 'counter' && type !== 'histogram') problems.push(`${name} is a ${type}, not a counter`);
  }
  for (const label of grouping) {
    if (!known.has(label)) problems.push(`grouping label ${label} is on none of its metrics`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------

describe('the PromQL reader of this test', () => {
  it('finds metric names, label matchers, grouping labels and ranges', () => {
    expect(
      readPromQl(
        'histogram_quantile(0.99, sum by (le, lane) (rate(a_bucket{lane=~"$lane", job="x"}[$__rate_interval]))) / on(lane) group_left b > 0',
      ),
    ).toEqual({
      selectors: [
        { name: 'a_bucket', labels: ['lane', 'job'], ranged: true },
        { name: 'b', labels: [], ranged: false },
      ],
      grouping: ['le', 'lane', 'lane'],
    });
    expect(readPromQl('label_values(c{namespace=~"$namespace"}, job)')).toEqual({
      selectors: [{ name: 'c', labels: ['namespace'], ranged: false }],
      grouping: ['job'],
    });
  });

  it('refuses a misspelled function and a selector without a name', () => {
    expect(() => readPromQl('rat(a[5m])')).toThrow('unknown function rat');
    expect(() => readPromQl('sum({job="x"})')).toThrow('without a metric name');
  });
});

describe(`k8s/dashboards/${DASHBOARD_FILE}`, () => {
  it('is a Grafana dashboard with a Prometheus datasource variable that every panel and target uses', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(variables.find((variable) => variable.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    const onDatasource = { type: 'prometheus', uid: '${datasource}' };
    for (const panel of panels) {
      expect(panel.datasource).toEqual(onDatasource);
      for (const target of panel.targets ?? []) expect(target.datasource).toEqual(onDatasource);
    }
  });

  it('gives every panel a title, a description and at least one target with an expression', () => {
    expect(panels.length).toBeGreaterThan(0);
    const problems = dashboard.panels.flatMap((panel, index) => {
      const where = `panel ${index} "${panel.title ?? ''}"`;
      if (!panel.title?.trim()) return [`${where} has no title`];
      if (panel.type === 'row') return [];
      return [
        ...(panel.description?.trim() ? [] : [`${where} has no description`]),
        ...((panel.targets ?? []).length > 0 ? [] : [`${where} has no target`]),
        ...(panel.targets ?? []).flatMap((target) => (target.expr?.trim() ? [] : [`${where} has an empty target`])),
      ];
    });
    expect(problems).toEqual([]);
  });

  it('has the rows of the service areas', () => {
    expect(dashboard.panels.filter((panel) => panel.type === 'row').map((row) => row.title)).toEqual([
      'Lanes',
      'Calls',
      'Breakers',
      'Containment & pools',
      'Rate limits & budgets',
      'LLM',
      'Process',
    ]);
  });

  it('lays the panels out on the 24-column grid without overlaps', () => {
    const cells = new Map<string, string>();
    for (const panel of dashboard.panels) {
      const { x, y, w, h } = panel.gridPos;
      if (!(x >= 0 && w > 0 && h > 0 && x + w <= 24)) throw new Error(`"${panel.title}" lies outside the grid`);
      for (let row = y; row < y + h; row++) {
        for (let column = x; column < x + w; column++) {
          const other = cells.get(`${row}:${column}`);
          if (other !== undefined)
            throw new Error(`"${panel.title}" overlaps "${other}" at row ${row}, column ${column}`);
          cells.set(`${row}:${column}`, panel.title ?? '');
        }
      }
    }
  });

  it('uses only template variables it defines', () => {
    const defined = new Set(variables.map((variable) => variable.name));
    const used = expressions.flatMap(([, expr]) =>
      [...expr.matchAll(/\$\{?([a-zA-Z_][a-zA-Z0-9_]*)\}?/g)].map((match) => match[1]),
    );
    expect(used.filter((name) => !name.startsWith('__') && !defined.has(name))).toEqual([]);
  });

  describe('against the /metrics of a real app whose config exercises every collector', () => {
    const ACME = testTenant('acme');
    let upstream: Upstream;
    /** The server of a pinned MCP tool: its pin's series start at zero. */
    let mcpUpstream: UpstreamMcpServer;
    let service: TestApp;
    let prom: PromText;

    beforeAll(async () => {
      // The tool's upstream fails once, so the call is retried (then succeeds).
      let served = 0;
      upstream = await Upstream.start((request, response) =>
        json(++served === 1 ? 503 : 200, { ok: served > 1 })(request, response),
      );
      mcpUpstream = await UpstreamMcpServer.start();
      service = await createTestApp({
        auth: { apiKeys: [ACME.apiKey] },
        lanes: { main: { concurrency: 4, queueCapacity: 4 }, llm: { concurrency: 4, queueCapacity: 4 } },
        tools: {
          fetch: {
            lane: 'main',
            kind: 'http',
            url: upstream.url('/fetch'),
            retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
            costUsd: 0.01,
          },
          pinned: { lane: 'main', kind: 'mcp', url: mcpUpstream.url, tool: 'echo' },
        },
        // Shadow mode: every call after the first is counted as limited, none refused.
        rateLimits: { default: { rpm: 1 }, enforce: false },
        budgets: { defaultUsd: 100 },
        // On, so its metrics are exported, at a threshold this run never reaches: nothing is shed.
        overload: { enabled: true, eventLoopDelayMs: 60_000, heapUsedRatio: 1 },
        llm: {
          routes: {
            chat: {
              lane: 'llm',
              // The first target always fails, so every uncached request fails over.
              targets: [
                { provider: 'fake', model: 'down-1', script: [{ status: 503 }] },
                { provider: 'fake', model: 'up-1' },
              ],
              retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
              cache: true,
            },
            // The slow target is hedged after 1 ms, and the fast one wins.
            hedged: {
              lane: 'llm',
              targets: [
                { provider: 'fake', model: 'slow-1', script: [{ delayMs: 60_000 }] },
                { provider: 'fake', model: 'up-1' },
              ],
              hedgeAfterMs: 1,
              cache: false,
            },
            // A target that reports more prompt than the request could have: charged within its hold.
            misreported: {
              lane: 'llm',
              targets: [
                {
                  provider: 'fake',
                  model: 'up-1',
                  script: [{ usage: { promptTokens: 10_000_000, completionTokens: 1 } }],
                },
              ],
              cache: false,
            },
            // No request fits the first target's window: it is passed over for the second.
            long: {
              lane: 'llm',
              targets: [
                { provider: 'fake', model: 'up-1', contextWindow: 16 },
                { provider: 'fake', model: 'up-1', contextWindow: 1_000_000 },
              ],
              cache: false,
            },
          },
          // A kept response over 1 KiB is not kept: counted as too_large.
          responses: { stored: { maxResponseBytes: 1024 } },
          prices: {
            'fake/slow-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
            'fake/down-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
            'fake/up-1': { inputPerMTokUsd: 1, outputPerMTokUsd: 2 },
          },
        },
      });

      // The same Idempotency-Key twice: the second call is a replay.
      for (let index = 0; index < 2; index++) {
        const response = await invoke(service.url, 'fetch', {}, { ...ACME.headers, 'idempotency-key': 'dash-1' });
        expect(response.status).toBe(200);
      }
      // The same question twice: a cache miss, then a hit.
      for (let index = 0; index < 2; index++) {
        const response = await send('POST', `${service.url}/v1/chat/completions`, {
          headers: ACME.headers,
          json: { model: 'chat', messages: [{ role: 'user', content: 'hello dashboard' }] },
        });
        expect(response.status).toBe(200);
      }
      // A streamed answer (its time to first token), a hedged one, one a target's window is too small
      // for, and one whose usage is past what it could be.
      for (const body of [
        { model: 'chat', stream: true, messages: [{ role: 'user', content: 'hello stream' }] },
        { model: 'hedged', messages: [{ role: 'user', content: 'hello hedge' }] },
        { model: 'long', messages: [{ role: 'user', content: 'hello window' }] },
        { model: 'misreported', messages: [{ role: 'user', content: 'hello usage' }] },
      ]) {
        const response = await send('POST', `${service.url}/v1/chat/completions`, {
          headers: ACME.headers,
          json: body,
        });
        expect(response.status).toBe(200);
      }
      const kept = await send('POST', `${service.url}/v1/responses`, {
        headers: ACME.headers,
        json: { model: 'long', input: 'a response too large to keep '.repeat(60) },
      });
      expect(kept.status).toBe(200);
      prom = await eventually(async () => {
        const response = await send('GET', `${service.url}/metrics`);
        expect(response.status).toBe(200);
        const scraped = parsePromText(response.body as string);
        expect(samplesOf(scraped, 'bulkhead_budget_spent_usd_total').length).toBeGreaterThan(0);
        return scraped;
      });
    });

    afterAll(async () => {
      await service?.close();
      await upstream?.close();
      await mcpUpstream?.close();
    });

    it('exports a sample of every bulkhead metric, so each can be checked', () => {
      const families = [...prom.types.keys()].filter((name) => name.startsWith('bulkhead_'));
      const silent = families.filter((name) => {
        const histogram = prom.types.get(name) === 'histogram';
        return samplesOf(prom, histogram ? `${name}_count` : name).length === 0;
      });
      expect(families.length).toBeGreaterThan(0);
      expect(silent).toEqual([]);
    });

    it('reports a misspelled metric, an unknown label and a rate over a gauge', () => {
      expect(problemsOf('rate(bulkhead_calls_totl[5m])', prom)).toEqual([
        'bulkhead_calls_totl is not a metric the app exports',
      ]);
      expect(problemsOf('sum by (lane) (bulkhead_calls_total{tool="x", tenant="y"})', prom)).toEqual([
        'bulkhead_calls_total has no label tenant',
        'grouping label lane is on none of its metrics',
      ]);
      expect(problemsOf('rate(bulkhead_lane_active[5m])', prom)).toEqual([
        'bulkhead_lane_active is a gauge, not a counter',
      ]);
    });

    it.each(expressions)('%s names only exported metrics and their labels', (_where, expr) => {
      expect(problemsOf(expr, prom)).toEqual([]);
    });
  });
});

describe('k8s/dashboards/kustomization.yaml', () => {
  const kustomization = parseYaml(readFileSync(join(DIR, 'kustomization.yaml'), 'utf8')) as {
    generatorOptions?: { disableNameSuffixHash?: boolean };
    configMapGenerator?: Array<{ name: string; files?: string[]; options?: { labels?: Record<string, unknown> } }>;
  };

  it('generates a ConfigMap holding the dashboard, labelled for the Grafana sidecar, with a fixed name', () => {
    expect(kustomization.generatorOptions?.disableNameSuffixHash).toBe(true);
    const generators = (kustomization.configMapGenerator ?? []).filter((generator) =>
      // A file entry is `path` or `key=path`.
      (generator.files ?? []).some((file) => file.split('=').at(-1) === DASHBOARD_FILE),
    );
    expect(generators).toHaveLength(1);
    // The sidecar matches the label's string value; a YAML number 1 would not be a valid label.
    expect(generators[0].options?.labels?.grafana_dashboard).toBe('1');
    for (const file of generators[0].files ?? []) expect(existsSync(join(DIR, file.split('=').at(-1)!))).toBe(true);
  });
});

import { Logger } from '@nestjs/common';
import { LaneRegistry } from '../../bulkhead';
import { BreakerRegistry } from '../../circuit-breaker';
import { FakeClock } from '../../common/fake-clock';
import { parseConfig } from '../../config';
import { DEFAULT_RETRY_BUDGET } from '../../retry';
import { LlmRoutes } from './llm-routes.service';

const KEY = (digit: string) => digit.repeat(64);
const ROUTE = { lane: 'llm', targets: [{ provider: 'fake', model: 'f' }] };

let breakers: BreakerRegistry | undefined;

afterEach(() => breakers?.onApplicationShutdown());

/** The routes of an `llm.routes` section, validated as the config file would be; tenants acme, beta, gamma. */
function routesOf(routes: Record<string, Record<string, unknown>>): LlmRoutes {
  const parsed = parseConfig(
    {
      auth: { apiKeys: ['acme', 'beta', 'gamma'].map((tenant, index) => ({ sha256: KEY(String(index)), tenant })) },
      lanes: { llm: { concurrency: 1, queueCapacity: 1 } },
      llm: { routes },
    },
    {},
  );
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const clock = new FakeClock();
  breakers = new BreakerRegistry({}, clock);
  return new LlmRoutes(
    { llm: parsed.config.llm, budgeted: false },
    new LaneRegistry({ lanes: parsed.config.lanes }, clock),
    breakers,
    clock,
  );
}

describe('LlmRoutes: which routes a tenant may use', () => {
  /** `open` has no list; `team` is acme's and beta's; `solo` is acme's. */
  const mixed = () =>
    routesOf({
      open: ROUTE,
      team: { ...ROUTE, tenants: ['acme', 'beta'] },
      solo: { ...ROUTE, tenants: ['acme'] },
    });

  it('gives a route without a list to every tenant, anonymous included', () => {
    const routes = mixed();

    for (const tenant of ['acme', 'beta', 'gamma', 'anonymous']) {
      expect(routes.forTenant('open', tenant)?.name).toBe('open');
    }
  });

  it('gives a route with a list only to the tenants it lists', () => {
    const routes = mixed();

    expect(routes.forTenant('team', 'acme')?.name).toBe('team');
    expect(routes.forTenant('team', 'beta')?.name).toBe('team');
    expect(routes.forTenant('solo', 'acme')?.name).toBe('solo');
    expect(routes.forTenant('team', 'gamma')).toBeUndefined();
    expect(routes.forTenant('solo', 'beta')).toBeUndefined();
    expect(routes.forTenant('solo', 'anonymous')).toBeUndefined();
  });

  it('orders targets by priority, the config order kept inside a group, and names breakers by config index', () => {
    const routes = routesOf({
      chat: {
        lane: 'llm',
        strategy: 'least-busy',
        targets: [
          { provider: 'fake', model: 'backup', priority: 2 },
          { provider: 'fake', model: 'a', weight: 3 },
          { provider: 'fake', model: 'b', priority: 0 },
        ],
      },
    });
    const chat = routes.get('chat')!;

    expect(chat.strategy).toBe('least-busy');
    expect(chat.groups.map((group) => group.map((target) => target.label))).toEqual([
      ['fake/a', 'fake/b'],
      ['fake/backup'],
    ]);
    expect(chat.targets.map((target) => [target.label, target.breaker.name, target.weight])).toEqual([
      ['fake/a', 'llm.chat.1', 3],
      ['fake/b', 'llm.chat.2', 1],
      ['fake/backup', 'llm.chat.0', 1],
    ]);
  });

  it('keeps a route without priorities or strategy one ordered group, in the config order', () => {
    const chat = routesOf({ chat: { ...ROUTE, targets: [ROUTE.targets[0], { provider: 'fake', model: 'g' }] } }).get(
      'chat',
    )!;

    expect(chat.strategy).toBe('ordered');
    expect(chat.groups).toEqual([chat.targets]);
    expect(chat.targets.map((target) => target.label)).toEqual(['fake/f', 'fake/g']);
  });

  it('gives the same route object as get()', () => {
    const routes = mixed();

    expect(routes.forTenant('solo', 'acme')).toBe(routes.get('solo'));
  });

  it('answers a route that does not exist as it answers one the tenant may not use', () => {
    const routes = mixed();

    expect(routes.forTenant('nope', 'acme')).toBeUndefined();
    expect(routes.forTenant('nope', 'gamma')).toBeUndefined();
  });

  it('never takes a name of Object.prototype for a route or a tenant', () => {
    const routes = mixed();

    expect(routes.forTenant('constructor', 'acme')).toBeUndefined();
    expect(routes.forTenant('toString', 'acme')).toBeUndefined();
    expect(routes.forTenant('solo', 'constructor')).toBeUndefined();
  });

  it('lists in the not_found error only the routes the tenant may use', () => {
    const routes = mixed();
    const messageFor = (tenant: string) => routes.unknownRouteError(tenant).message;

    expect(messageFor('acme')).toBe('no LLM route of that name (routes: open, team, solo)');
    expect(messageFor('beta')).toBe('no LLM route of that name (routes: open, team)');
    expect(messageFor('gamma')).toBe('no LLM route of that name (routes: open)');
    expect(messageFor('anonymous')).toBe('no LLM route of that name (routes: open)');
  });

  it('says the tenant may use no route, with no list, when it may use none', () => {
    const routes = routesOf({ solo: { ...ROUTE, tenants: ['acme'] } });

    expect(routes.unknownRouteError('beta').message).toBe('no LLM route of that name (this tenant may use none)');
    expect(routes.unknownRouteError('anonymous').message).toBe('no LLM route of that name (this tenant may use none)');
  });

  it('makes the error a 404 not_found with no attempts and nothing to wait for', () => {
    const error = mixed().unknownRouteError('gamma');

    expect({ kind: error.kind, status: error.status, attempts: error.attempts, wait: error.retryAfterMs }).toEqual({
      kind: 'not_found',
      status: 404,
      attempts: 0,
      wait: undefined,
    });
  });

  it('keeps names() as every route, for the service itself', () => {
    expect(mixed().names()).toEqual(['open', 'team', 'solo']);
  });
});

describe('LlmRoutes: a target on a public API without a key', () => {
  let breakers: BreakerRegistry | undefined;
  let warnings: string[];

  beforeEach(() => {
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
  });

  afterEach(() => {
    jest.restoreAllMocks();
    breakers?.onApplicationShutdown();
  });

  /** Builds the routes of a config file with `llm.routes.chat.targets` as given, in `env`. */
  function build(targets: unknown[], env: Record<string, string> = {}): void {
    const parsed = parseConfig(
      { lanes: { llm: { concurrency: 1, queueCapacity: 1 } }, llm: { routes: { chat: { lane: 'llm', targets } } } },
      env,
    );
    if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
    const clock = new FakeClock();
    breakers = new BreakerRegistry({}, clock);
    new LlmRoutes(
      { llm: parsed.config.llm, budgeted: false },
      new LaneRegistry({ lanes: parsed.config.lanes }, clock),
      breakers,
      clock,
    );
  }

  it('is warned about at start-up, naming the target, when its ${VAR} is not set', () => {
    build([
      { provider: 'fake', model: 'f' },
      { provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' },
      { provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: '${ANTHROPIC_API_KEY}' },
      { provider: 'openai', model: 'gpt-4o', baseUrl: 'https://api.openai.com/v1', apiKey: '${OPENAI_API_KEY:-}' },
    ]);

    expect(warnings).toEqual([
      'llm.routes.chat.targets.1 (openai/gpt-4o-mini) has no apiKey, and api.openai.com refuses requests without one: set it (an apiKey of ${VAR} whose variable is not set is left out)',
      'llm.routes.chat.targets.2 (anthropic/claude-haiku-4-5) has no apiKey, and api.anthropic.com refuses requests without one: set it (an apiKey of ${VAR} whose variable is not set is left out)',
      'llm.routes.chat.targets.3 (openai/gpt-4o) has no apiKey, and api.openai.com refuses requests without one: set it (an apiKey of ${VAR} whose variable is not set is left out)',
    ]);
  });

  it('is not warned about once the variable is set, nor is a target on a server of its own', () => {
    build(
      [
        { provider: 'openai', model: 'gpt-4o-mini', apiKey: '${OPENAI_API_KEY}' },
        { provider: 'openai', model: 'llama3', baseUrl: 'http://127.0.0.1:11434/v1' },
      ],
      { OPENAI_API_KEY: 'sk-test' },
    );

    expect(warnings).toEqual([]);
  });
});

describe('LlmRoutes: retry budgets', () => {
  it('gives each target of a route a retry budget of its own, with a tool’s defaults', () => {
    const routes = routesOf({ chat: { ...ROUTE, targets: [ROUTE.targets[0], { provider: 'fake', model: 'g' }] } });
    const [first, second] = routes.forTenant('chat', 'anonymous')!.targets;
    expect(first.retryBudget?.settings).toEqual(DEFAULT_RETRY_BUDGET);
    expect(second.retryBudget).toBeDefined();
    expect(second.retryBudget).not.toBe(first.retryBudget);
  });

  it('takes the route’s retry.budget, what it leaves out from the defaults', () => {
    const routes = routesOf({ chat: { ...ROUTE, retry: { budget: { percent: 50 } } } });
    const [only] = routes.forTenant('chat', 'anonymous')!.targets;
    expect(only.retryBudget?.settings).toEqual({ ...DEFAULT_RETRY_BUDGET, percent: 50 });
  });
});

import { resolve } from 'node:path';
import { loadConfigFile, parseConfig, validateConfig } from './config.loader';
import { crossReferenceProblems } from './cross-references';
import { problemsOf } from '../../test/support/config-results';

const PROBLEM = 'llm.routes.chat.semanticCache: needs llm.cache.semantic.enabled: true (the semantic cache is off)';

/** A valid document with one LLM route, `route` and `semantic` merged into it. */
function withRoute(route: Record<string, unknown>, semantic?: Record<string, unknown>) {
  return {
    lanes: { llm: { concurrency: 1, queueCapacity: 1 } },
    llm: {
      routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'f' }], ...route } },
      ...(semantic === undefined ? {} : { cache: { semantic } }),
    },
  };
}

describe('crossReferenceProblems: the semantic cache', () => {
  it.each<[string, Record<string, unknown> | undefined]>([
    ['left out', undefined],
    ['enabled: false', { enabled: false }],
    ['enabled: "false" from an environment variable', { enabled: 'false' }],
    ['given without enabled', { threshold: 0.9 }],
  ])('reports a route that asks for it while it is %s', (_label, semantic) => {
    expect(crossReferenceProblems(withRoute({ semanticCache: true }, semantic))).toEqual([PROBLEM]);
  });

  it('reports every route that asks for it, and none that does not', () => {
    const document = withRoute({ semanticCache: true });
    const routes = document.llm.routes as Record<string, Record<string, unknown>>;
    routes.other = { ...routes.chat, semanticCache: 'true' };
    routes.plain = { ...routes.chat, semanticCache: false };

    expect(crossReferenceProblems(document)).toEqual([PROBLEM, PROBLEM.replace('routes.chat', 'routes.other')]);
  });

  it.each([true, 'true'])('accepts a route that asks for it when enabled is %p', (enabled) => {
    expect(crossReferenceProblems(withRoute({ semanticCache: true }, { enabled }))).toEqual([]);
  });

  it('leaves a value that is not a boolean to the schema', () => {
    expect(crossReferenceProblems(withRoute({ semanticCache: true }, { enabled: 'yes' }))).toEqual([]);
    expect(crossReferenceProblems(withRoute({ semanticCache: 'maybe' }))).toEqual([]);
  });

  it('is reported by the loader, together with the other problems', () => {
    const document = withRoute({ semanticCache: true, timeoutMs: 0 });

    expect(problemsOf(parseConfig(document, {}))).toEqual([
      'llm.routes.chat.timeoutMs: must be an integer from 1 to 600000',
      PROBLEM,
    ]);
  });

  it('reads enabled after ${ENV} substitution', () => {
    const document = withRoute({ semanticCache: true }, { enabled: '${SEMANTIC_CACHE:-false}' });

    expect(problemsOf(parseConfig(document, {}))).toEqual([PROBLEM]);
    expect(parseConfig(document, { SEMANTIC_CACHE: 'true' }).ok).toBe(true);
  });
});

describe('crossReferenceProblems: chaos needs the environment’s consent', () => {
  const REFUSED =
    'chaos.enabled: is true, which injects failures on purpose: refused unless the environment variable ' +
    'BULKHEAD_ALLOW_CHAOS=true is set';

  /** A valid document with a tool that fails every attempt, and `chaos` as given. */
  function withChaos(chaos: Record<string, unknown> | undefined) {
    return {
      lanes: { main: { concurrency: 1, queueCapacity: 1 } },
      tools: {
        flaky: { lane: 'main', kind: 'builtin', builtin: 'echo', chaos: { faultRate: 1, faultKind: 'transient' } },
      },
      ...(chaos === undefined ? {} : { chaos }),
    };
  }

  it.each<[string, Record<string, string>]>([
    ['unset', {}],
    ['empty', { BULKHEAD_ALLOW_CHAOS: '' }],
    ['false', { BULKHEAD_ALLOW_CHAOS: 'false' }],
    ['1', { BULKHEAD_ALLOW_CHAOS: '1' }],
    ['TRUE', { BULKHEAD_ALLOW_CHAOS: 'TRUE' }],
  ])('refuses chaos.enabled: true while BULKHEAD_ALLOW_CHAOS is %s', (_label, env) => {
    expect(problemsOf(parseConfig(withChaos({ enabled: true }), env))).toEqual([REFUSED]);
  });

  it('accepts chaos.enabled: true with BULKHEAD_ALLOW_CHAOS=true, settings and all', () => {
    const result = parseConfig(withChaos({ enabled: true }), { BULKHEAD_ALLOW_CHAOS: 'true' });

    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.chaos).toEqual({ enabled: true });
    expect(result.config.tools.flaky.chaos).toEqual({ faultRate: 1, faultKind: 'transient' });
  });

  it.each<[string, Record<string, unknown> | undefined]>([
    ['left out', undefined],
    ['enabled: false', { enabled: false }],
    ['given without enabled', {}],
  ])('accepts per-tool settings, inert, while chaos is %s and the variable unset', (_label, chaos) => {
    const result = parseConfig(withChaos(chaos), {});

    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.chaos).toEqual({ enabled: false });
  });

  it('reads enabled after ${ENV} substitution, and the consent from the same environment', () => {
    const document = withChaos({ enabled: '${CHAOS:-false}' });

    expect(parseConfig(document, {}).ok).toBe(true);
    expect(problemsOf(parseConfig(document, { CHAOS: 'true' }))).toEqual([REFUSED]);
    expect(parseConfig(document, { CHAOS: 'true', BULKHEAD_ALLOW_CHAOS: 'true' }).ok).toBe(true);
  });

  it('refuses options given in code the same way, reading the consent from the environment given', () => {
    expect(problemsOf(validateConfig(withChaos({ enabled: true }), {}))).toEqual([REFUSED]);
    expect(validateConfig(withChaos({ enabled: true }), { BULKHEAD_ALLOW_CHAOS: 'true' }).ok).toBe(true);
  });

  it('allows nothing that needs consent when given no environment at all', () => {
    expect(crossReferenceProblems(withChaos({ enabled: true }))).toEqual([REFUSED]);
  });

  it('leaves a value that is not a boolean to the schema', () => {
    expect(crossReferenceProblems(withChaos({ enabled: 'yes' }), {})).toEqual([]);
    expect(problemsOf(parseConfig(withChaos({ enabled: 'yes' }), {}))).toEqual([
      'chaos.enabled: must be true or false',
    ]);
  });
});

describe('llm.routes.<name>.tenants: only configured tenants', () => {
  const KEY = (digit: string) => digit.repeat(64);

  /** A valid document with API keys for `keyTenants` and one LLM route allowed to `tenants`. */
  function withTenants(tenants: unknown, keyTenants: string[] = ['acme', 'beta']) {
    return {
      auth: { apiKeys: keyTenants.map((tenant, index) => ({ sha256: KEY(String(index)), tenant })) },
      lanes: { llm: { concurrency: 1, queueCapacity: 1 } },
      llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'fake', model: 'f' }], tenants } } },
    };
  }

  it('accepts a list of tenants the API keys name, and keeps it', () => {
    const result = parseConfig(withTenants(['beta', 'acme']), {});

    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.llm.routes.chat.tenants).toEqual(['beta', 'acme']);
  });

  it('leaves the list out when the route has none: every tenant may use it', () => {
    const document = withTenants(undefined);
    delete (document.llm.routes.chat as Record<string, unknown>).tenants;
    const result = parseConfig(document, {});

    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.llm.routes.chat.tenants).toBeUndefined();
  });

  it('reports each tenant no API key names, with the tenants that are configured', () => {
    expect(crossReferenceProblems(withTenants(['acme', 'globex', 'initech']))).toEqual([
      "llm.routes.chat.tenants[1]: unknown tenant 'globex' (the tenants of auth.apiKeys: acme, beta)",
      "llm.routes.chat.tenants[2]: unknown tenant 'initech' (the tenants of auth.apiKeys: acme, beta)",
    ]);
  });

  it('says so when no API key is configured at all', () => {
    expect(crossReferenceProblems(withTenants(['acme'], []))).toEqual([
      "llm.routes.chat.tenants[0]: unknown tenant 'acme' (auth.apiKeys names no tenant)",
    ]);
  });

  it('reports anonymous, which is no configured tenant: callers without a key use only routes without a list', () => {
    expect(crossReferenceProblems(withTenants(['acme', 'anonymous']))).toEqual([
      "llm.routes.chat.tenants[1]: 'anonymous' cannot be listed: callers without a key may use only a route without tenants",
    ]);
  });

  it('leaves names that are not valid names, and lists that are not lists, to the schema', () => {
    expect(crossReferenceProblems(withTenants(['acme', 'not a name']))).toEqual([]);
    expect(crossReferenceProblems(withTenants('acme'))).toEqual([]);
    expect(problemsOf(parseConfig(withTenants(['acme', 'not a name']), {}))).toEqual([
      'llm.routes.chat.tenants.1: must be 1-64 letters, digits, "_", "-" or ".", starting with a letter or digit',
    ]);
    expect(problemsOf(parseConfig(withTenants('acme'), {}))).toEqual(['llm.routes.chat.tenants: must be a list']);
  });

  it('refuses an empty list: a route nobody may use is a mistake', () => {
    expect(problemsOf(parseConfig(withTenants([]), {}))).toEqual([
      'llm.routes.chat.tenants: must list at least one tenant (leave it out to let every tenant in)',
    ]);
  });

  it('is reported by the loader, together with the other problems, after ${ENV} substitution', () => {
    const document = withTenants(['${ROUTE_TENANT}']);
    (document.llm.routes.chat as Record<string, unknown>).timeoutMs = 0;

    expect(problemsOf(parseConfig(document, { ROUTE_TENANT: 'globex' }))).toEqual([
      'llm.routes.chat.timeoutMs: must be an integer from 1 to 600000',
      "llm.routes.chat.tenants[0]: unknown tenant 'globex' (the tenants of auth.apiKeys: acme, beta)",
    ]);
    expect(parseConfig(withTenants(['${ROUTE_TENANT}']), { ROUTE_TENANT: 'beta' }).ok).toBe(true);
  });

  it('refuses options given in code the same way', () => {
    expect(problemsOf(validateConfig(withTenants(['globex']), {}))).toEqual([
      "llm.routes.chat.tenants[0]: unknown tenant 'globex' (the tenants of auth.apiKeys: acme, beta)",
    ]);
  });
});

describe('config/full.example.yaml', () => {
  it('shows a route’s tenants, naming a tenant of its API keys', () => {
    const path = resolve(__dirname, '../../config/full.example.yaml');
    const result = loadConfigFile(path, { BULKHEAD_ADMIN_TOKEN: 'an-admin-token-of-32-characters!' });

    if (!result.ok) throw new Error(result.problems.join('\n'));
    expect(result.config.llm.routes.chat.tenants).toEqual(['acme']);
    expect(result.config.auth.apiKeys.map((key) => key.tenant)).toContain('acme');
  });
});

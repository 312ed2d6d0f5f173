import { type ConfigResult, parseConfig, validateConfig } from './config.loader';
import { crossReferenceProblems } from './cross-references';

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

function problemsOf(result: ConfigResult): string[] {
  if (result.ok) throw new Error('expected problems, got a valid config');
  return result.problems;
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

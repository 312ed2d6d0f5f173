import { type ConfigResult, parseConfig } from './config.loader';
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

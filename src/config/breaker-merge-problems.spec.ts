import { breakerMergeProblems } from './breaker-merge-problems';
import { parseConfig } from './config.loader';
import { problemsOf } from '../../test/support/config-results';

const LANES = { lanes: { main: { concurrency: 1, queueCapacity: 1 } } };

describe('breakerMergeProblems: maxResetTimeoutMs against resetTimeoutMs once breakers.default is merged in', () => {
  it('reports a breaker whose maxResetTimeoutMs is below the resetTimeoutMs it inherits, built-in or default', () => {
    expect(
      breakerMergeProblems({
        breakers: { default: { resetTimeoutMs: 60_000 }, render: { maxResetTimeoutMs: 45_000 } },
        tools: { search: { breaker: { maxResetTimeoutMs: 20_000 } } },
        llm: { routes: { chat: { breaker: { maxResetTimeoutMs: 59_999 } } } },
      }),
    ).toEqual([
      'breakers.render.maxResetTimeoutMs: must be at least resetTimeoutMs (60000, with breakers.default)',
      'tools.search.breaker.maxResetTimeoutMs: must be at least resetTimeoutMs (60000, with breakers.default)',
      'llm.routes.chat.breaker.maxResetTimeoutMs: must be at least resetTimeoutMs (60000, with breakers.default)',
    ]);
    expect(breakerMergeProblems({ breakers: { render: { maxResetTimeoutMs: 10_000 } } })).toEqual([
      'breakers.render.maxResetTimeoutMs: must be at least resetTimeoutMs (30000, with breakers.default)',
    ]);
  });

  it('reports a resetTimeoutMs above the default maxResetTimeoutMs at the breaker that sets it', () => {
    expect(
      breakerMergeProblems({
        breakers: { default: { resetTimeoutMs: 10_000, maxResetTimeoutMs: 60_000 } },
        tools: { search: { breaker: { resetTimeoutMs: 120_000 } }, quick: { breaker: { resetTimeoutMs: 5_000 } } },
      }),
    ).toEqual([
      'tools.search.breaker.maxResetTimeoutMs: must be at least resetTimeoutMs (120000, with breakers.default)',
    ]);
  });

  it('reports breakers.default once, not every breaker that inherits both', () => {
    expect(
      breakerMergeProblems({
        breakers: { default: { maxResetTimeoutMs: 1_000 }, render: {} },
        tools: { search: { breaker: { volumeThreshold: 3 } } },
      }),
    ).toEqual(['breakers.default.maxResetTimeoutMs: must be at least resetTimeoutMs (30000, with breakers.default)']);
  });

  it('leaves a mapping that sets both to the schema, and what is not a number to the schema', () => {
    expect(
      breakerMergeProblems({
        breakers: {
          render: { resetTimeoutMs: 10_000, maxResetTimeoutMs: 5_000 },
          other: { maxResetTimeoutMs: 'soon' },
        },
        tools: 'none',
      }),
    ).toEqual([]);
  });

  it('is reported by the loader with the other problems, after ${ENV} substitution', () => {
    const doc = {
      ...LANES,
      breakers: { default: { resetTimeoutMs: '${RESET_MS}' }, render: { maxResetTimeoutMs: 1_000 } },
    };
    expect(problemsOf(parseConfig(doc, { RESET_MS: '2000' }))).toEqual([
      'breakers.render.maxResetTimeoutMs: must be at least resetTimeoutMs (2000, with breakers.default)',
    ]);
  });
});

import { seededRandom } from '../../common';
import type { LlmTarget } from './llm-route';
import { TargetLoad } from './target-load';
import { chooseTarget, type ChoiceScope, reasonOf, type TargetStrategy } from './target-strategy';

function member(label: string, weight = 1): LlmTarget {
  return { label, weight, load: new TargetLoad() } as unknown as LlmTarget;
}

function scope(group: LlmTarget[], eligible: (target: LlmTarget) => boolean = () => true): ChoiceScope {
  return { group, eligible, kind: 'answer', now: 0 };
}

/** How often each member wins `draws` choices. */
function tally(strategy: TargetStrategy, group: LlmTarget[], draws = 10_000): number[] {
  const random = seededRandom(1);
  const wins = group.map(() => 0);
  for (let draw = 0; draw < draws; draw++) wins[group.indexOf(chooseTarget(strategy, scope(group), random)!)]++;
  return wins.map((count) => count / draws);
}

describe('chooseTarget', () => {
  it('ordered: the first eligible member, by position', () => {
    const [a, b, c] = [member('a'), member('b'), member('c')];
    expect(
      chooseTarget(
        'ordered',
        scope([a, b, c], (t) => t !== a),
        seededRandom(1),
      ),
    ).toBe(b);
  });

  it.each<TargetStrategy>(['weighted', 'least-busy', 'lowest-latency'])(
    '%s: two equal members are each chosen about half the time',
    (strategy) => {
      const [a, b] = [member('a'), member('b')];
      for (const share of tally(strategy, [a, b])) expect(Math.abs(share - 0.5)).toBeLessThan(0.02);
    },
  );

  it('least-busy: breaks a tie of three among equals evenly, never by position', () => {
    const group = [member('a'), member('b'), member('c'), member('busy')];
    group[3].load.started();
    const shares = tally('least-busy', group);
    for (const share of shares.slice(0, 3)) expect(Math.abs(share - 1 / 3)).toBeLessThan(0.02);
    expect(shares[3]).toBe(0);
  });

  it('least-busy: the member with the fewest attempts in flight', () => {
    const [a, b] = [member('a'), member('b')];
    a.load.started();
    expect(chooseTarget('least-busy', scope([a, b]), seededRandom(1))).toBe(b);
  });

  it('weighted: in proportion to the weights, among the eligible only', () => {
    const group = [member('a', 3), member('b', 1), member('c', 100)];
    const random = seededRandom(3);
    let a = 0;
    for (let draw = 0; draw < 10_000; draw++) {
      if (
        chooseTarget(
          'weighted',
          scope(group, (t) => t.label !== 'c'),
          random,
        ) === group[0]
      )
        a++;
    }
    expect(Math.abs(a / 10_000 - 0.75)).toBeLessThan(0.02);
  });

  it('lowest-latency: a member with no sample first, then the lowest average', () => {
    const [fast, slow, fresh] = [member('fast'), member('slow'), member('fresh')];
    fast.load.sample('answer', 100, 0);
    slow.load.sample('answer', 300, 0);
    const all = scope([fast, slow, fresh]);
    expect(chooseTarget('lowest-latency', all, seededRandom(1))).toBe(fresh);
    expect(reasonOf('lowest-latency', fresh, all)).toBe('no_latency_sample');
    const sampled = scope([slow, fast]);
    expect(chooseTarget('lowest-latency', sampled, seededRandom(1))).toBe(fast);
    expect(reasonOf('lowest-latency', fast, sampled)).toBe('lowest_latency');
  });

  it('lowest-latency: one probe at a time to a member with no sample, the rest to the measured one', () => {
    const [fast, slow] = [member('fast'), member('slow')];
    fast.load.sample('answer', 10, 0);
    const both = scope([fast, slow]);

    expect(chooseTarget('lowest-latency', both, seededRandom(1))).toBe(slow);
    slow.load.started();
    for (let request = 0; request < 100; request++) {
      expect(chooseTarget('lowest-latency', both, seededRandom(request))).toBe(fast);
    }
    slow.load.ended();
    slow.load.sample('answer', 1_500, 0);
    expect(chooseTarget('lowest-latency', both, seededRandom(1))).toBe(fast);
  });

  it('lowest-latency: with nothing measured and every member probed, still chooses one', () => {
    const [a, b] = [member('a'), member('b')];
    a.load.started();
    b.load.started();

    expect([a, b]).toContain(chooseTarget('lowest-latency', scope([a, b]), seededRandom(1)));
  });

  it('is undefined when no member is eligible', () => {
    for (const strategy of ['ordered', 'weighted', 'least-busy', 'lowest-latency'] as const) {
      expect(
        chooseTarget(
          strategy,
          scope([member('a')], () => false),
          seededRandom(1),
        ),
      ).toBeUndefined();
    }
  });
});

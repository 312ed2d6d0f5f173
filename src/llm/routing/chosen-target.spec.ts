import type { FailoverProgress } from './attempt-race';
import { chosenTarget } from './chosen-target';
import type { LlmTarget } from './llm-route';

const target = (label: string) => ({ label }) as LlmTarget;
const [small, large, other] = [target('openai/small'), target('openai/large'), target('anthropic/other')];

function progress(partial: Partial<FailoverProgress>): FailoverProgress {
  return { attempts: 0, failovers: 0, tried: [], hedges: [], choices: [], ...partial };
}

describe('chosenTarget', () => {
  it('is the target that served, with the reason it was chosen, after a failover', () => {
    const chosen = chosenTarget(
      progress({
        tried: [
          { target: small, outcome: 'transient' },
          { target: large, outcome: 'ok' },
        ],
        choices: [
          { target: small, reason: 'least_busy' },
          { target: large, reason: 'position' },
        ],
      }),
    );
    expect(chosen).toEqual({ target: large, reason: 'position' });
  });

  it("is a winning hedge's target as a hedge, not the one it raced", () => {
    const chosen = chosenTarget(
      progress({
        tried: [
          { target: small, outcome: 'hedge_lost' },
          { target: other, outcome: 'ok' },
        ],
        choices: [
          { target: small, reason: 'lowest_latency' },
          { target: other, reason: 'hedge' },
        ],
      }),
    );
    expect(chosen).toEqual({ target: other, reason: 'hedge' });
  });

  it('is the last target tried when none served, and never a target only passed over', () => {
    const chosen = chosenTarget(
      progress({
        tried: [{ target: large, outcome: 'timeout' }],
        choices: [
          { target: small, reason: 'context_window' },
          { target: large, reason: 'weight' },
        ],
      }),
    );
    expect(chosen).toEqual({ target: large, reason: 'weight' });
    expect(chosenTarget(progress({ choices: [{ target: small, reason: 'context_window' }] }))).toBeUndefined();
  });
});

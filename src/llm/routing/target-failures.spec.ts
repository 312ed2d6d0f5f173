import { ResilienceError } from '../../common';
import { ProviderFailure } from '../providers/provider-errors';
import type { LlmTarget } from './llm-route';
import { TargetFailures } from './target-failures';

const target = (label: string) => ({ label }) as LlmTarget;

describe('TargetFailures', () => {
  it('leaves the one failure of a one-target request as it is', () => {
    const failures = new TargetFailures();
    const only = new ResilienceError('unavailable', 'target openai/a answered 401: the key was refused');
    failures.failed(target('openai/a'), only);

    expect(failures.answer(only)).toBe(only);
  });

  it("names each target's last failure in the order first tried, keeping the last one's class, kind and code", () => {
    const failures = new TargetFailures();
    const [local, cloud] = [target('openai/llama3'), target('anthropic/claude')];
    failures.failed(local, new ResilienceError('transient', 'first try'));
    failures.failed(cloud, new ResilienceError('circuit_open', 'open'));
    failures.failed(local, new ResilienceError('egress_denied', "host '127.0.0.1' is refused"));
    const last = new ProviderFailure('transient', 'overloaded', 'target anthropic/claude answered 529', {
      attempts: 3,
      retryAfterMs: 2_000,
      upstreamStatus: 529,
    });
    failures.failed(cloud, last);

    const answer = failures.answer(last);

    expect(answer.message).toBe(
      "every target failed: openai/llama3 egress_denied (host '127.0.0.1' is refused); " +
        'anthropic/claude transient (target anthropic/claude answered 529)',
    );
    expect(answer).toBeInstanceOf(ProviderFailure);
    expect(answer).toMatchObject({
      kind: 'transient',
      code: 'overloaded',
      status: last.status,
      attempts: 3,
      retryAfterMs: 2_000,
      upstreamStatus: 529,
    });
  });
});

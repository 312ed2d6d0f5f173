import { LazyAbortController } from '../../common';
import { FakeClock, settle } from '../../common/fake-clock';
import type { FakeStepConfig } from '../../config';
import { track } from '../../../test/support/deferred';
import { noNetwork, providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import type { ChatRequest } from '../chat.types';
import { FakeProvider } from './fake.provider';
import { isProviderFailure } from './provider-errors';

const WALL_START_MS = Date.UTC(2026, 0, 1);
const TARGET = { provider: 'fake', model: 'fake-1' };

/** 30 characters of prompt text: 8 estimated tokens. */
const REQUEST: ChatRequest = {
  model: 'fake-1',
  messages: [
    { role: 'system', content: 'Be nice.' },
    { role: 'user', content: [{ type: 'text', text: 'Say hello' }] },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'Hello there' },
  ],
};

let clock: FakeClock;

beforeEach(() => {
  clock = new FakeClock(WALL_START_MS);
});

function fake(script?: FakeStepConfig[]): FakeProvider {
  return new FakeProvider(script, clock);
}

// Every attempt gets a client that fails the test if used: the fake must stay offline.
const attempt = (options: { maxOutputTokens?: number; abort?: LazyAbortController; request?: ChatRequest } = {}) =>
  providerAttempt(TARGET, options.request ?? REQUEST, { http: noNetwork, ...options });

describe('FakeProvider', () => {
  it('echoes the last user message without a script, with estimated usage', async () => {
    const completion = await fake().complete(attempt());

    expect(completion).toEqual({
      id: 'chatcmpl-fake-1',
      object: 'chat.completion',
      created: WALL_START_MS / 1000,
      model: 'fake-1',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Hello there', refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      // ceil(30 / 4) for the prompt ('Be nice.' 'Say hello' 'ok' 'Hello there'), ceil(11 / 4) for the answer.
      usage: { prompt_tokens: 8, completion_tokens: 3, total_tokens: 11, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  it('answers an empty text when there is no user message', async () => {
    const completion = await fake().complete(
      attempt({ request: { model: 'fake-1', messages: [{ role: 'system', content: 'x' }] } }),
    );

    expect(completion.choices[0].message.content).toBe('');
    expect(completion.usage.completion_tokens).toBe(0);
  });

  it('answers the steps in order, one per attempt, and repeats the last', async () => {
    const subject = fake([{ text: 'one' }, { text: 'two' }]);

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await subject.complete(attempt())).choices[0].message.content);

    expect(answers).toEqual(['one', 'two', 'two', 'two']);
  });

  it('counts steps per target: each provider instance has its own script position', async () => {
    const first = fake([{ text: 'a' }, { text: 'b' }]);
    const second = fake([{ text: 'a' }, { text: 'b' }]);

    await first.complete(attempt());

    expect((await second.complete(attempt())).choices[0].message.content).toBe('a');
    expect((await first.complete(attempt())).choices[0].message.content).toBe('b');
  });

  it('waits delayMs of the clock before answering', async () => {
    const answered = track(fake([{ text: 'late', delayMs: 1_000 }]).complete(attempt()));

    clock.advance(999);
    await settle();
    expect(answered.state).toBe('pending');

    clock.advance(1);
    await settle();
    expect(answered.state).toBe('fulfilled');
    expect(answered.value?.created).toBe((WALL_START_MS + 1_000) / 1000);
  });

  it('stops waiting when the attempt is aborted, with its reason, and leaves no timer', async () => {
    const abort = new LazyAbortController();
    const answered = fake([{ text: 'never', delayMs: 60_000 }]).complete(attempt({ abort }));
    const reason = new Error('attempt timed out');

    abort.abort(reason);

    await expect(answered).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  it('does not answer an attempt aborted before it started', async () => {
    const abort = new LazyAbortController();
    const reason = new Error('client left');
    abort.abort(reason);

    await expect(fake([{ text: 'x' }]).complete(attempt({ abort }))).rejects.toBe(reason);
  });

  it.each([
    [{ status: 503, retryAfterMs: 100 }, 'transient', 'overloaded', 100],
    [{ status: 429, retryAfterMs: 2_000 }, 'transient', 'rate_limited', 2_000],
    [{ status: 429, code: 'insufficient_quota', retryAfterMs: 2_000 }, 'unavailable', 'insufficient_quota', undefined],
    [{ status: 429, code: 'enforced_spend_limit_reached' }, 'unavailable', 'insufficient_quota', undefined],
    [{ status: 500 }, 'transient', 'upstream_error', undefined],
    [{ status: 400 }, 'invalid_request', 'bad_request', undefined],
    [{ status: 401 }, 'unavailable', 'unauthorized', undefined],
    [{ status: 404 }, 'unavailable', 'model_not_found', undefined],
  ] as Array<[FakeStepConfig, string, string, number | undefined]>)(
    'fails a %j step as a provider would: %s / %s',
    async (step, kind, code, retryAfterMs) => {
      const error = await rejection(fake([step]).complete(attempt()));

      expect(isProviderFailure(error)).toBe(true);
      expect(error).toMatchObject({ kind, code, retryAfterMs, upstreamStatus: step.status });
      expect(error.message).toMatch(new RegExp(`^target fake/fake-1 answered ${step.status}: `));
    },
  );

  it('fails after its delay, not before', async () => {
    const answered = track(fake([{ status: 503, delayMs: 500 }]).complete(attempt()));

    await settle();
    expect(answered.state).toBe('pending');
    clock.advance(500);
    await settle();

    expect(answered.state).toBe('rejected');
    expect(answered.reason).toMatchObject({ kind: 'transient', code: 'overloaded' });
  });

  it('answers a toolCall step with a tool call and estimated usage', async () => {
    const completion = await fake([{ toolCall: { name: 'weather', arguments: { city: 'Paris' } } }]).complete(
      attempt(),
    );

    expect(completion.choices[0]).toEqual({
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          { id: 'call_fake_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      finish_reason: 'tool_calls',
      logprobs: null,
    });
    // 'weather{"city":"Paris"}' is 23 characters.
    expect(completion.usage.completion_tokens).toBe(6);
  });

  it('reports a step usage as given', async () => {
    const completion = await fake([{ text: 'hi', usage: { promptTokens: 1_000, completionTokens: 250 } }]).complete(
      attempt(),
    );

    expect(completion.usage).toEqual({
      prompt_tokens: 1_000,
      completion_tokens: 250,
      total_tokens: 1_250,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });

  it('cuts a text longer than the output cap and finishes with length', async () => {
    const completion = await fake([{ text: 'x'.repeat(100) }]).complete(attempt({ maxOutputTokens: 5 }));

    expect(completion.choices[0].message.content).toBe('x'.repeat(20));
    expect(completion.choices[0].finish_reason).toBe('length');
    expect(completion.usage.completion_tokens).toBe(5);
  });

  it('echoes on a step that only waits', async () => {
    const answered = track(fake([{ delayMs: 10 }]).complete(attempt()));

    clock.advance(10);
    await settle();

    expect(answered.value?.choices[0].message.content).toBe('Hello there');
  });

  it('answers the same usage for the same request every time', async () => {
    const subject = fake();

    const [first, second] = [await subject.complete(attempt()), await subject.complete(attempt())];

    expect(second.usage).toEqual(first.usage);
    expect(second.id).toBe('chatcmpl-fake-2');
  });
});

import { LazyAbortController } from '../../common';
import { FakeClock, settle } from '../../common/fake-clock';
import type { FakeStepConfig } from '../llm.options';
import { track } from '../../../test/support/deferred';
import { noNetwork, providerAttempt } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import type { ChatChunk, ChatRequest } from '../chat.types';
import { StreamAssembly } from '../streaming/stream-assembly';
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

  describe('stream', () => {
    /** 48 characters without a space: three pieces of 16. */
    const TEXT = 'x'.repeat(16) + 'y'.repeat(16) + 'z'.repeat(16);

    async function collect(chunks: AsyncIterable<ChatChunk>): Promise<ChatChunk[]> {
      const all: ChatChunk[] = [];
      for await (const chunk of chunks) all.push(chunk);
      return all;
    }

    /** What reading the stream threw, and the chunks before it. */
    async function failure(chunks: AsyncIterable<ChatChunk>): Promise<{ error: Error; before: ChatChunk[] }> {
      const before: ChatChunk[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of chunks) before.push(chunk);
        })(),
      );
      return { error, before };
    }

    const contents = (chunks: ChatChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content);

    it('streams the answer complete() gives, 16 characters a chunk, then the finish and the usage', async () => {
      const step: FakeStepConfig = { text: TEXT };

      const chunks = await collect(fake([step]).stream(attempt()));
      const whole = await fake([step]).complete(attempt());

      expect(contents(chunks)).toEqual(['', 'x'.repeat(16), 'y'.repeat(16), 'z'.repeat(16), undefined, undefined]);
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe('stop');
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: whole.usage });
      const assembly = new StreamAssembly();
      for (const chunk of chunks) assembly.add(chunk);
      expect(assembly.completion(0)).toEqual(whole);
    });

    it('cuts text between words where a space is near the 16th character', async () => {
      const chunks = await collect(fake([{ text: 'The quick brown fox jumps over the lazy dog' }]).stream(attempt()));

      expect(contents(chunks).slice(1, -2)).toEqual(['The quick brown ', 'fox jumps over ', 'the lazy dog']);
    });

    it('streams a toolCall step as one tool call chunk, finishing with tool_calls', async () => {
      const chunks = await collect(
        fake([{ toolCall: { name: 'weather', arguments: { city: 'Paris' } } }]).stream(attempt()),
      );

      expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
        { role: 'assistant', content: '' },
        {
          tool_calls: [
            {
              index: 0,
              id: 'call_fake_1',
              type: 'function',
              function: { name: 'weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        {},
        undefined,
      ]);
      expect(chunks.at(-2)?.choices[0].finish_reason).toBe('tool_calls');
    });

    it('takes the next step of the script, shared with complete()', async () => {
      const subject = fake([{ text: 'one' }, { text: 'two' }]);

      await subject.complete(attempt());
      const chunks = await collect(subject.stream(attempt()));

      expect(contents(chunks)[1]).toBe('two');
      expect(chunks[0].id).toBe('chatcmpl-fake-2');
    });

    it('waits delayMs of the clock before the first chunk', async () => {
      const reading = fake([{ text: TEXT, delayMs: 500 }])
        .stream(attempt())
        [Symbol.asyncIterator]();
      const first = track(reading.next());

      clock.advance(499);
      await settle();
      expect(first.state).toBe('pending');

      clock.advance(1);
      await settle();
      expect(first.value?.value?.choices[0].delta).toEqual({ role: 'assistant', content: '' });
    });

    it('waits chunkDelayMs of the clock between content chunks, and none before the first', async () => {
      const reading = fake([{ text: TEXT, chunkDelayMs: 100 }])
        .stream(attempt())
        [Symbol.asyncIterator]();

      expect((await reading.next()).value?.choices[0].delta.content).toBe('');
      expect((await reading.next()).value?.choices[0].delta.content).toBe('x'.repeat(16));
      const second = track(reading.next());
      clock.advance(99);
      await settle();
      expect(second.state).toBe('pending');
      clock.advance(1);
      await settle();
      expect(second.value?.value?.choices[0].delta.content).toBe('y'.repeat(16));

      const third = track(reading.next());
      clock.advance(100);
      await settle();
      expect(third.value?.value?.choices[0].delta.content).toBe('z'.repeat(16));
      // The finish and the usage follow the last content at once.
      expect((await reading.next()).value?.choices[0].finish_reason).toBe('stop');
      expect((await reading.next()).value?.usage).toBeDefined();
      expect((await reading.next()).done).toBe(true);
    });

    it('stops waiting between chunks when the attempt is aborted, with its reason, and leaves no timer', async () => {
      const abort = new LazyAbortController();
      const reading = fake([{ text: TEXT, chunkDelayMs: 60_000 }])
        .stream(attempt({ abort }))
        [Symbol.asyncIterator]();
      await reading.next();
      await reading.next();
      const waiting = reading.next();
      const reason = new Error('attempt stopped');

      abort.abort(reason);

      await expect(waiting).rejects.toBe(reason);
      expect(clock.pendingTimers).toBe(0);
    });

    it.each([
      [{ status: 503, retryAfterMs: 100 }, 'transient', 'overloaded'],
      [{ status: 429, retryAfterMs: 2_000 }, 'transient', 'rate_limited'],
      [{ status: 400 }, 'invalid_request', 'bad_request'],
    ] as Array<[FakeStepConfig, string, string]>)('fails a %j step before any chunk', async (step, kind, code) => {
      const { error, before } = await failure(fake([step]).stream(attempt()));

      expect(before).toEqual([]);
      expect(isProviderFailure(error)).toBe(true);
      expect(error).toMatchObject({ kind, code, upstreamStatus: step.status });
    });

    it('fails a failing step after its delay, with no chunk before', async () => {
      const reading = fake([{ status: 503, delayMs: 300 }])
        .stream(attempt())
        [Symbol.asyncIterator]();
      const first = track(reading.next());

      clock.advance(299);
      await settle();
      expect(first.state).toBe('pending');
      clock.advance(1);
      await settle();

      expect(first.reason).toMatchObject({ kind: 'transient', code: 'overloaded' });
    });

    it.each([0, 1, 2])('drops the stream after %i content chunks with stream_cut', async (cutAfterChunks) => {
      const { error, before } = await failure(fake([{ text: TEXT, cutAfterChunks }]).stream(attempt()));

      expect(contents(before)).toEqual(['', ...['x', 'y', 'z'].slice(0, cutAfterChunks).map((c) => c.repeat(16))]);
      expect(isProviderFailure(error)).toBe(true);
      expect(error).toMatchObject({ kind: 'transient', code: 'stream_cut' });
      expect(error.message).toBe('target fake/fake-1 ended its stream before the answer was complete');
    });

    it('drops the stream after its last content chunk, before the finish and the usage, when told to cut there', async () => {
      const { error, before } = await failure(fake([{ text: TEXT, cutAfterChunks: 3 }]).stream(attempt()));

      expect(contents(before)).toEqual(['', 'x'.repeat(16), 'y'.repeat(16), 'z'.repeat(16)]);
      expect(error).toMatchObject({ code: 'stream_cut' });
    });

    it('counts a tool call chunk as content: cut before it at 0, after it at 1', async () => {
      const toolCall = { name: 'weather', arguments: { city: 'Paris' } };

      const atZero = await failure(fake([{ toolCall, cutAfterChunks: 0 }]).stream(attempt()));
      const atOne = await failure(fake([{ toolCall, cutAfterChunks: 1 }]).stream(attempt()));

      expect(atZero.before).toHaveLength(1);
      expect(atZero.error).toMatchObject({ code: 'stream_cut' });
      expect(atOne.before.map((chunk) => Boolean(chunk.choices[0].delta.tool_calls))).toEqual([false, true]);
      expect(atOne.error).toMatchObject({ code: 'stream_cut' });
    });

    it('streams the whole answer when cutAfterChunks is past its content', async () => {
      const chunks = await collect(fake([{ text: TEXT, cutAfterChunks: 4 }]).stream(attempt()));

      expect(chunks).toHaveLength(6);
      expect(chunks.at(-1)?.usage).toBeDefined();
    });
  });
});

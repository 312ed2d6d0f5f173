import { type Deferred, deferred, track } from '../../../test/support/deferred';
import { LazyAbortController, raceWithAbort, ResilienceError } from '../../common';
import { FakeClock, settle } from '../../common/fake-clock';
import type { ChatChunk, ChatDelta } from '../chat.types';
import type { ChunkBatch } from './chunk-batch';
import { ProviderStream } from './provider-stream';

const LABEL = 'openai/gpt-4o';
const UNREADABLE = new ResilienceError('transient', 'target openai/gpt-4o answered 200 with an unreadable body');

function chunk(delta: ChatDelta): ChatChunk {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1_767_225_600,
    model: 'gpt-4o',
    choices: [{ index: 0, delta, finish_reason: null, logprobs: null }],
  };
}

const ROLE = chunk({ role: 'assistant', content: '' });
const HEL = chunk({ content: 'Hel' });
const LO = chunk({ content: 'lo' });

/**
 * A provider's stream the test feeds by hand: each batch (one chunk, or several that came in one
 * read), end or error is taken only when the reader asks for it, and the wait for it fails at
 * once when the attempt is aborted, as a request's body does when its connection is destroyed.
 */
class Source {
  /** Reads of the provider's stream started so far: nothing is read ahead of the reader. */
  pulls = 0;
  finallyRan = false;
  private readonly items: Array<Deferred<ChunkBatch | undefined>> = [];
  private sent = 0;

  constructor(private readonly abort: LazyAbortController) {}

  send(...chunks: ChatChunk[]): void {
    this.slot(this.sent++).resolve({ chunks });
  }

  end(): void {
    this.slot(this.sent++).resolve(undefined);
  }

  fail(error: unknown): void {
    this.slot(this.sent++).reject(error);
  }

  async *batches(): AsyncGenerator<ChunkBatch> {
    try {
      for (;;) {
        const value = await raceWithAbort(this.slot(this.pulls++).promise, this.abort);
        if (value === undefined) return;
        yield value;
      }
    } finally {
      this.finallyRan = true;
    }
  }

  private slot(index: number): Deferred<ChunkBatch | undefined> {
    return (this.items[index] ??= deferred());
  }
}

let clock: FakeClock;
let abort: LazyAbortController;
let source: Source;
let stream: ProviderStream;

beforeEach(() => {
  clock = new FakeClock();
  abort = new LazyAbortController();
  source = new Source(abort);
  stream = new ProviderStream(source.batches(), clock, abort, LABEL, () => UNREADABLE);
});

describe('ProviderStream', () => {
  describe('reading', () => {
    it('answers the batches in order, then undefined once the answer is complete, and settles', async () => {
      const settled = track(stream.settled);
      source.send(ROLE);
      source.send(HEL, LO);
      source.end();

      const read = [await stream.next(), await stream.next()];
      await settle();
      expect(settled.state).toBe('pending');

      expect(await stream.next()).toBeUndefined();
      await settle();
      expect(read).toEqual([{ chunks: [ROLE] }, { chunks: [HEL, LO] }]);
      expect(settled.state).toBe('fulfilled');
      expect(source.finallyRan).toBe(true);
      expect(await stream.next()).toBeUndefined();
    });

    it('adds every chunk it answers to the assembly', async () => {
      source.send(ROLE);
      source.send(HEL, LO);

      for (let read = 0; read < 2; read++) await stream.next();

      expect(stream.assembly.completion(0).choices[0].message.content).toBe('Hello');
      expect(stream.assembly.usage(0).completion_tokens).toBe(2);
    });

    it('reads nothing ahead of its reader', async () => {
      source.send(ROLE);
      source.send(HEL);
      source.send(LO);

      await stream.next();
      await settle();

      expect(source.pulls).toBe(1);
    });

    it('passes the commit point at the first chunk with content, and stays past it', async () => {
      source.send(ROLE);
      source.send(HEL);
      source.send(chunk({}));

      await stream.next();
      expect(stream.committed).toBe(false);
      await stream.next();
      expect(stream.committed).toBe(true);
      await stream.next();
      expect(stream.committed).toBe(true);
    });

    it('passes the commit point at a batch whose first content comes after other chunks', async () => {
      source.send(ROLE, HEL, LO);

      await stream.next();

      expect(stream.committed).toBe(true);
    });

    it.each([
      [
        'a tool call',
        chunk({ tool_calls: [{ index: 0, id: 'call_1', function: { name: 'weather', arguments: '' } }] }),
      ],
      ['a refusal', chunk({ refusal: 'No.' })],
    ])('passes the commit point at %s', async (_name, first) => {
      source.send(first);

      await stream.next();

      expect(stream.committed).toBe(true);
    });

    it("fails with the provider's error and settles", async () => {
      const settled = track(stream.settled);
      const failure = new ResilienceError('transient', 'target openai/gpt-4o ended its stream early');
      source.send(HEL);
      source.fail(failure);

      await stream.next();
      await expect(stream.next()).rejects.toBe(failure);
      await settle();

      expect(settled.state).toBe('fulfilled');
      expect(source.finallyRan).toBe(true);
    });
  });

  describe('a chunk the assembly cannot take', () => {
    // A chunk no reader checked: nothing the stream machinery does with it may reject unhandled.
    const BROKEN = { ...HEL, choices: [{ index: 0, delta: { tool_calls: 5 }, finish_reason: null }] } as never;

    it('fails the read as the unreadable answer, cancels the request and settles, with nothing unhandled', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const settled = track(stream.settled);
        source.send(HEL);
        await stream.next();
        source.send(BROKEN);

        await expect(stream.next()).rejects.toBe(UNREADABLE);
        await settle();

        expect(abort.aborted).toBe(true);
        expect(abort.reason).toBe(UNREADABLE);
        expect(settled.state).toBe('fulfilled');
        expect(source.finallyRan).toBe(true);
        await expect(stream.next()).rejects.toBe(UNREADABLE);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  });

  describe('the wait for a chunk', () => {
    it('fails with timeout at waitMs and not a millisecond before, cancelling the request', async () => {
      const settled = track(stream.settled);
      const reading = track(stream.next(1_000));

      clock.advance(999);
      await settle();
      expect(reading.state).toBe('pending');
      expect(abort.aborted).toBe(false);

      clock.advance(1);
      await settle();
      expect(reading.state).toBe('rejected');
      expect(reading.reason).toBeInstanceOf(ResilienceError);
      expect(reading.reason).toMatchObject({ kind: 'timeout', message: `target ${LABEL} sent nothing for 1000 ms` });
      // The attempt's own cancellation carries the timeout: the provider's request is aborted with it.
      expect(abort.aborted).toBe(true);
      expect(abort.reason).toBe(reading.reason);
      expect(source.finallyRan).toBe(true);
      expect(settled.state).toBe('fulfilled');
      expect(clock.pendingTimers).toBe(0);
    });

    it('does nothing when the batch comes in time, and clears its timer at the end', async () => {
      const reading = track(stream.next(1_000));

      clock.advance(500);
      source.send(HEL);
      await settle();

      expect(reading.value).toEqual({ chunks: [HEL] });
      clock.advance(10_000);
      await settle();
      expect(abort.aborted).toBe(false);
      expect(clock.pendingTimers).toBe(0);

      const last = track(stream.next(1_000));
      source.end();
      await settle();
      expect(last.value).toBeUndefined();
      expect(clock.pendingTimers).toBe(0);
    });

    it('gives each read its whole wait with one timer for the stream', async () => {
      const first = track(stream.next(1_000));
      clock.advance(900);
      source.send(HEL);
      await settle();
      expect(first.value).toEqual({ chunks: [HEL] });

      // The timer set for the first read is due at 1,000: the second read, from 900, waits until 1,900.
      const second = track(stream.next(1_000));
      expect(clock.pendingTimers).toBe(1);
      clock.advance(999);
      await settle();
      expect(second.state).toBe('pending');
      expect(abort.aborted).toBe(false);

      clock.advance(1);
      await settle();
      expect(second.reason).toMatchObject({ kind: 'timeout', message: `target ${LABEL} sent nothing for 1000 ms` });
      expect(abort.aborted).toBe(true);
      expect(clock.pendingTimers).toBe(0);
    });

    it('sets its timer sooner for a read with a shorter wait than the one it was set for', async () => {
      const first = track(stream.next(60_000));
      source.send(HEL);
      await settle();
      expect(first.state).toBe('fulfilled');

      const second = track(stream.next(1_000));
      clock.advance(1_000);
      await settle();

      expect(second.reason).toMatchObject({ kind: 'timeout' });
    });

    it('waits without limit when no waitMs is given', async () => {
      const reading = track(stream.next());

      clock.advance(3_600_000);
      await settle();

      expect(reading.state).toBe('pending');
      expect(clock.pendingTimers).toBe(0);
      source.send(HEL);
      await settle();
      expect(reading.value).toEqual({ chunks: [HEL] });
    });
  });

  describe('cancellation', () => {
    it('fails a read in progress with the abort reason when the attempt is aborted, and settles', async () => {
      const settled = track(stream.settled);
      const reading = track(stream.next(60_000));
      const reason = new ResilienceError('stopped', 'the client closed the connection');

      abort.abort(reason);
      await settle();

      expect(reading.reason).toBe(reason);
      expect(clock.pendingTimers).toBe(0);
      expect(source.finallyRan).toBe(true);
      expect(settled.state).toBe('fulfilled');
    });

    it('fails a read at once, with the reason, once the attempt was aborted', async () => {
      const reason = new ResilienceError('stopped', 'the client closed the connection');
      abort.abort(reason);

      await expect(stream.next()).rejects.toBe(reason);
      expect(source.pulls).toBe(0);
    });

    it("ends a stream paused between chunks at once on stop(): the provider's clean-up runs and it settles", async () => {
      const settled = track(stream.settled);
      source.send(HEL);
      await stream.next();
      const reason = new ResilienceError('stopped', 'another target of the route answered first');

      stream.stop(reason);
      await settle();

      // Nothing was reading, so no abort could reach the provider's stream: only ending the iteration runs its finally.
      expect(source.finallyRan).toBe(true);
      expect(settled.state).toBe('fulfilled');
      expect(abort.reason).toBe(reason);
      await expect(stream.next()).rejects.toBe(reason);
    });

    it('fails a read in progress with the reason on stop(), and settles', async () => {
      const settled = track(stream.settled);
      const reading = track(stream.next());
      const reason = new ResilienceError('timeout', 'target openai/gpt-4o sent nothing for 30000 ms');

      stream.stop(reason);
      await settle();

      expect(reading.reason).toBe(reason);
      expect(source.finallyRan).toBe(true);
      expect(settled.state).toBe('fulfilled');
    });

    it('keeps the first reason when stopped twice', async () => {
      const first = new ResilienceError('stopped', 'first');

      stream.stop(first);
      stream.stop(new ResilienceError('timeout', 'second'));
      await settle();

      expect(abort.reason).toBe(first);
      await expect(stream.settled).resolves.toBeUndefined();
    });
  });
});

import { ResilienceError } from '../../common';
import type { ChatChunk } from '../chat.types';
import { ChunkQueueSink } from './chunk-queue-sink';

const chunk = (content: string): ChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 0,
  model: 'm',
  choices: [{ index: 0, delta: { content }, finish_reason: null, logprobs: null }],
});

describe('ChunkQueueSink', () => {
  it('hands chunks over in order, then the end', async () => {
    const sink = new ChunkQueueSink();
    sink.open();
    void sink.write(chunk('a'));
    void sink.write(chunk('b'));
    sink.end();

    expect((await sink.next())?.choices[0].delta.content).toBe('a');
    expect((await sink.next())?.choices[0].delta.content).toBe('b');
    expect(await sink.next()).toBeUndefined();
  });

  it('holds the writer until the reader has taken what was written', async () => {
    const sink = new ChunkQueueSink();
    let taken = false;
    void sink.write(chunk('a'))?.then(() => (taken = true));
    await Promise.resolve();
    expect(taken).toBe(false);

    await sink.next();
    await Promise.resolve();
    expect(taken).toBe(true);
  });

  it('wakes a reader that waits when a chunk comes', async () => {
    const sink = new ChunkQueueSink();
    const reading = sink.next();
    void sink.write(chunk('late'));

    expect((await reading)?.choices[0].delta.content).toBe('late');
  });

  it('throws the failure after the chunks written before it', async () => {
    const sink = new ChunkQueueSink();
    const failure = new ResilienceError('transient', 'cut');
    void sink.write(chunk('a'));
    sink.fail(failure);

    expect((await sink.next())?.choices[0].delta.content).toBe('a');
    await expect(sink.next()).rejects.toBe(failure);
  });

  it('lets the writer go, and drops what comes, once the reader left', async () => {
    const sink = new ChunkQueueSink();
    const held = sink.write(chunk('a'));
    sink.destroy();

    await expect(held).resolves.toBeUndefined();
    expect(sink.write(chunk('b'))).toBeUndefined();
    expect(await sink.next()).toBeUndefined();
  });
});

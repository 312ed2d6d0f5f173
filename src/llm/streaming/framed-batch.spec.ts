import type { ChatChunk } from '../chat.types';
import { type ChunkSending, framedBatch } from './framed-batch';

const frame = (text: string) => `data: ${text}\n\n`;
const parsed = (texts: string[]) => ({
  chunks: texts.map((text) => JSON.parse(text) as ChatChunk),
  wire: texts.map(frame),
});
const leaveNullUsageOut = (chunk: ChatChunk): ChunkSending => {
  if (chunk.usage !== null) return 'as_given';
  chunk.usage = undefined;
  return 'null_usage_left_out';
};

describe('framedBatch', () => {
  it('sends chunks as given byte for byte, spacing included', () => {
    const texts = ['{"id":"a", "choices":[]}', '{"id":"b","choices":[{"delta":{"content":"\\u00e9"}}]}'];
    expect(framedBatch(parsed(texts), () => 'as_given')).toBe(texts.map(frame).join(''));
  });

  it('serialises a changed chunk again and leaves out a left-out one', () => {
    const batch = parsed(['{"id":"a","choices":[]}', '{"id":"b","choices":[]}']);
    const sending = (chunk: ChatChunk): ChunkSending => {
      if (chunk.id === 'a') return 'left_out';
      chunk.bulkhead = { costUsd: 1 };
      return 'changed';
    };
    expect(framedBatch(batch, sending)).toBe(frame('{"id":"b","choices":[],"bulkhead":{"costUsd":1}}'));
  });

  it('cuts a top-level usage: null off the end of the event, as JSON.stringify would leave it out', () => {
    const text = '{"id":"a","choices":[{"delta":{"content":"x"}}],"usage":null}';
    expect(framedBatch(parsed([text]), leaveNullUsageOut)).toBe(
      frame('{"id":"a","choices":[{"delta":{"content":"x"}}]}'),
    );
  });

  it.each([
    ['usage: null first', '{"usage":null,"id":"a","choices":[]}'],
    ['another "usage" before it', '{"id":"a","choices":[{"delta":{"content":"usage"}}],"usage":null}'],
    ['spaces in the JSON', '{"id":"a","choices":[], "usage": null}'],
  ])('serialises the chunk again when its usage: null is not cut off safely (%s)', (_name, text) => {
    const expected = JSON.parse(text) as Record<string, unknown>;
    delete expected.usage;
    expect(framedBatch(parsed([text]), leaveNullUsageOut)).toBe(frame(JSON.stringify(expected)));
  });

  it('serialises again a chunk given with no event of its own', () => {
    const chunk = JSON.parse('{"id":"a","choices":[]}') as ChatChunk;
    expect(framedBatch({ chunks: [chunk] }, () => 'as_given')).toBe(frame('{"id":"a","choices":[]}'));
  });
});

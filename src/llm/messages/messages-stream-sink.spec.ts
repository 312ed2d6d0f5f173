import { chatChunk, sinkEvents } from '../../../test/support/translated-stream';
import type { ChatChunk, ChatCompletion } from '../chat.types';
import { completionChunks } from '../streaming/completion-chunks';
import { toMessagesAnswer } from './chat-to-messages-answer';
import { MessagesStreamSink } from './messages-stream-sink';

const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };

const streamed = (chunks: ChatChunk[]) => sinkEvents((sse) => new MessagesStreamSink(sse, {}), chunks);

/** The blocks a client builds from the events: each block's start, its text deltas applied. */
function blocksOf(events: Array<{ event: string; data: Record<string, any> }>): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, any>> = [];
  for (const { event, data } of events) {
    if (event === 'content_block_start') blocks[data.index] = { ...data.content_block };
    if (event === 'content_block_delta' && data.delta.type === 'text_delta') blocks[data.index].text += data.delta.text;
  }
  return blocks;
}

const stopReasonOf = (events: Array<{ event: string; data: Record<string, any> }>) =>
  events.find(({ event }) => event === 'message_delta')?.data.delta.stop_reason;

describe('a streamed answer as Messages events', () => {
  it('streams a refusal as a text block and a message_delta whose stop_reason is refusal', async () => {
    const events = await streamed([
      chatChunk({ role: 'assistant', content: '' }),
      chatChunk({ refusal: "I'm sorry, " }),
      chatChunk({ refusal: "I can't help with that." }),
      chatChunk({}, 'stop'),
      chatChunk(null, null, USAGE),
    ]);

    expect(events.map(({ event }) => event)).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(blocksOf(events)).toEqual([{ type: 'text', text: "I'm sorry, I can't help with that." }]);
    expect(events[6].data).toMatchObject({
      delta: { stop_reason: 'refusal', stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 7 },
    });
  });

  it('streams text then a refusal as two text blocks, in the order they came', async () => {
    const events = await streamed([
      chatChunk({ content: 'Partly: ' }),
      chatChunk({ refusal: 'not the rest.' }),
      chatChunk({}, 'stop'),
    ]);

    expect(blocksOf(events)).toEqual([
      { type: 'text', text: 'Partly: ' },
      { type: 'text', text: 'not the rest.' },
    ]);
    expect(stopReasonOf(events)).toBe('refusal');
  });

  it('ends a text answer with the finish reason as before', async () => {
    const events = await streamed([chatChunk({ content: 'Hi.' }), chatChunk({}, 'length')]);

    expect(blocksOf(events)).toEqual([{ type: 'text', text: 'Hi.' }]);
    expect(stopReasonOf(events)).toBe('max_tokens');
  });

  it('replays a cached refusal as the message a client got whole', async () => {
    const completion: ChatCompletion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-test',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Partly: ', refusal: "I can't help with the rest." },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: USAGE,
    };
    const whole = toMessagesAnswer(completion);

    const events = await streamed(completionChunks(completion));

    expect(blocksOf(events)).toEqual(whole.content);
    expect(stopReasonOf(events)).toBe(whole.stop_reason);
  });
});

import { chatChunk, sinkEvents } from '../../../test/support/translated-stream';
import type { ChatChunk, ChatCompletion } from '../chat.types';
import { completionChunks } from '../streaming/completion-chunks';
import { ResponseIds, toResponseObject } from './chat-to-responses-answer';
import { ResponsesStreamSink } from './responses-stream-sink';

const REQUEST = { model: 'chat', input: 'hi' };
/** The call id, 128 random bits (22 base64url characters), the item's index. */
const MESSAGE_ID = /^msg_call-1_[A-Za-z0-9_-]{22}_0$/;
const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };

const streamed = (chunks: ChatChunk[], ids = new ResponseIds('call-1')) =>
  sinkEvents((sse) => new ResponsesStreamSink(sse, REQUEST, ids, {}, 1_700_000_000), chunks);

/** The stream's last event's whole response. */
const completedOf = (events: Array<{ data: Record<string, any> }>) => events.at(-1)!.data.response;

describe('a streamed answer as Responses events', () => {
  it("streams a refusal as OpenAI does: a refusal part, its deltas, its done events, in the completed response's output", async () => {
    const events = await streamed([
      chatChunk({ role: 'assistant', content: '' }),
      chatChunk({ refusal: "I'm sorry, " }),
      chatChunk({ refusal: "I can't help with that." }),
      chatChunk({}, 'stop'),
      chatChunk(null, null, USAGE),
    ]);

    expect(events.map(({ event }) => event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const messageId = events[2].data.item.id;
    expect(messageId).toMatch(MESSAGE_ID);
    const at = { item_id: messageId, output_index: 0, content_index: 0 };
    expect(events[2].data.item).toEqual({
      type: 'message',
      id: messageId,
      status: 'in_progress',
      role: 'assistant',
      content: [],
    });
    expect(events[3].data).toMatchObject({ ...at, part: { type: 'refusal', refusal: '' } });
    expect(events[4].data).toMatchObject({ ...at, delta: "I'm sorry, " });
    expect(events[6].data).toEqual({
      type: 'response.refusal.done',
      sequence_number: 6,
      ...at,
      refusal: "I'm sorry, I can't help with that.",
    });
    const part = { type: 'refusal', refusal: "I'm sorry, I can't help with that." };
    expect(events[7].data).toMatchObject({ ...at, part });
    expect(events[8].data.item).toMatchObject({ status: 'completed', content: [part] });
    expect(completedOf(events)).toMatchObject({
      status: 'completed',
      output: [{ type: 'message', status: 'completed', content: [part] }],
      usage: { output_tokens: 7 },
    });
  });

  it('keeps text and a refusal as two parts of one message, in the order they came', async () => {
    const events = await streamed([
      chatChunk({ content: 'Here is ' }),
      chatChunk({ refusal: 'No more.' }),
      chatChunk({ content: 'After.' }),
      chatChunk({}, 'stop'),
    ]);

    const parts = events.filter(({ event }) => event === 'response.content_part.done').map(({ data }) => data);
    expect(parts.map(({ content_index: index, part }) => [index, part])).toEqual([
      [0, { type: 'output_text', text: 'Here is ', annotations: [] }],
      [1, { type: 'refusal', refusal: 'No more.' }],
      [2, { type: 'output_text', text: 'After.', annotations: [] }],
    ]);
    expect(events.filter(({ event }) => event === 'response.output_item.added')).toHaveLength(1);
    expect(completedOf(events).output[0].content).toEqual(parts.map(({ part }) => part));
  });

  it('streams a text answer as before: one output_text part, its deltas and done events', async () => {
    const events = await streamed([
      chatChunk({ content: 'Hel' }),
      chatChunk({ content: 'lo.' }),
      chatChunk({}, 'stop'),
    ]);

    expect(events.map(({ event }) => event).slice(2)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(completedOf(events).output[0].content).toEqual([{ type: 'output_text', text: 'Hello.', annotations: [] }]);
  });

  it('replays a cached refusal as the answer a client got whole', async () => {
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

    const ids = new ResponseIds('call-1');
    const replayed = completedOf(await streamed(completionChunks(completion), ids));

    expect(replayed.output).toEqual(toResponseObject(REQUEST, completion, ids).output);
    expect(replayed.output[0].content.map((part: { type: string }) => part.type)).toEqual(['output_text', 'refusal']);
  });
});

import type { AnthropicStreamEvent } from '../chat.types';
import { NativeMessageAssembly, nativeMessageEvents } from './messages-pass-through-answer';

const CITATION = {
  type: 'char_location',
  cited_text: 'Notes.',
  document_index: 0,
  start_char_index: 0,
  end_char_index: 6,
};

/** A stream with every kind of block a tool loop sees: thinking, cited text, a redacted thought, a tool use. */
const EVENTS: AnthropicStreamEvent[] = [
  {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 1, cache_read_input_tokens: 10 },
    },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Look it ' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'up.' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig-1' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'opaque' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'content_block_start', index: 2, content_block: { type: 'text', text: '', citations: [] } },
  { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'Your notes ' } },
  { type: 'content_block_delta', index: 2, delta: { type: 'citations_delta', citation: CITATION } },
  { type: 'content_block_delta', index: 2, delta: { type: 'text_delta', text: 'say so.' } },
  { type: 'content_block_stop', index: 2 },
  { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
  { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: ' "Paris"}' } },
  { type: 'content_block_stop', index: 3 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 40 } },
  { type: 'message_stop' },
];

const WHOLE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content: [
    { type: 'thinking', thinking: 'Look it up.', signature: 'sig-1' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: 'Your notes say so.', citations: [CITATION] },
    { type: 'tool_use', id: 'toolu_1', name: 'f', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: { input_tokens: 30, output_tokens: 40, cache_read_input_tokens: 10 },
};

function assemble(events: AnthropicStreamEvent[]): Record<string, unknown> {
  const assembly = new NativeMessageAssembly();
  for (const event of events) assembly.add(event);
  return assembly.whole();
}

describe('a native message and its events', () => {
  it('adds the events up to the message Anthropic would have answered whole', () => {
    expect(assemble(EVENTS)).toEqual(WHOLE);
  });

  it('streams a whole message as events that add up to it again', () => {
    expect(assemble(nativeMessageEvents(WHOLE))).toEqual(WHOLE);
  });

  it("opens a replay with the input usage and no output, as Anthropic's message_start does", () => {
    const [start] = nativeMessageEvents(WHOLE);

    expect(start).toMatchObject({
      type: 'message_start',
      message: { content: [], stop_reason: null, usage: { input_tokens: 30, output_tokens: 0 } },
    });
  });

  it('keeps the text of a tool input that is not JSON, rather than lose it', () => {
    const events = [
      EVENTS[0],
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"cut' } },
      { type: 'content_block_stop', index: 0 },
    ];

    expect(assemble(events).content).toEqual([
      { type: 'tool_use', id: 't', name: 'f', input: { _arguments: '{"cut' } },
    ]);
  });
});

/**
 * Streams of OpenAI's Responses API as its server sends them (`stream: true`), written out event
 * by event: what a loopback model server answers a streamed Responses request with, and what the
 * readers are tested against. Each is the stream of a whole answer also given here.
 */

export const ENCRYPTED = 'gAAAAABo-encrypted-reasoning-only-openai-can-read';

const USAGE = {
  input_tokens: 40,
  input_tokens_details: { cached_tokens: 8 },
  output_tokens: 300,
  output_tokens_details: { reasoning_tokens: 290 },
  total_tokens: 340,
};

const HEAD = {
  id: 'resp_upstream_s1',
  object: 'response',
  created_at: 1_767_225_000,
  model: 'gpt-5-2025-08-07',
  error: null,
  incomplete_details: null,
  reasoning: { effort: 'high', summary: 'auto' },
  text: { format: { type: 'text' }, verbosity: 'low' },
};

const REASONING = {
  type: 'reasoning',
  id: 'rs_upstream_s1',
  summary: [{ type: 'summary_text', text: 'The user asks for a capital.' }],
  encrypted_content: ENCRYPTED,
};
const MESSAGE = {
  type: 'message',
  id: 'msg_upstream_s1',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text: 'Paris.', annotations: [], logprobs: [] }],
};
const CALL = {
  type: 'function_call',
  id: 'fc_upstream_s1',
  status: 'completed',
  call_id: 'call_weather_1',
  name: 'weather',
  arguments: '{"city":"Paris"}',
};

/** The whole answer {@link REASONED_EVENTS} streams: reasoning (summarised and encrypted), then "Paris.". */
export const REASONED_ANSWER = { ...HEAD, status: 'completed', output: [REASONING, MESSAGE], usage: USAGE };
/** The whole answer {@link CALLING_EVENTS} streams: reasoning, a sentence, then a function call. */
export const CALLING_ANSWER = {
  ...HEAD,
  status: 'completed',
  output: [REASONING, { ...MESSAGE, content: [{ ...MESSAGE.content[0], text: 'Let me look.' }] }, CALL],
  usage: USAGE,
};

const started = { ...HEAD, status: 'in_progress', output: [], usage: null };

function reasoningEvents(index: number): object[] {
  const at = { item_id: REASONING.id, output_index: index };
  const summary = { ...at, summary_index: 0 };
  return [
    { type: 'response.output_item.added', output_index: index, item: { ...REASONING, summary: [] } },
    { type: 'response.reasoning_summary_part.added', ...summary, part: { type: 'summary_text', text: '' } },
    { type: 'response.reasoning_summary_text.delta', ...summary, delta: 'The user asks ' },
    { type: 'response.reasoning_summary_text.delta', ...summary, delta: 'for a capital.' },
    { type: 'response.reasoning_summary_text.done', ...summary, text: REASONING.summary[0].text },
    { type: 'response.reasoning_summary_part.done', ...summary, part: REASONING.summary[0] },
    { type: 'response.output_item.done', output_index: index, item: REASONING },
  ];
}

function messageEvents(index: number, pieces: string[]): object[] {
  const text = pieces.join('');
  const part = { type: 'output_text', text, annotations: [], logprobs: [] };
  const at = { item_id: MESSAGE.id, output_index: index, content_index: 0 };
  return [
    {
      type: 'response.output_item.added',
      output_index: index,
      item: { ...MESSAGE, status: 'in_progress', content: [] },
    },
    { type: 'response.content_part.added', ...at, part: { ...part, text: '' } },
    ...pieces.map((delta) => ({ type: 'response.output_text.delta', ...at, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, part },
    { type: 'response.output_item.done', output_index: index, item: { ...MESSAGE, content: [part] } },
  ];
}

function callEvents(index: number): object[] {
  const at = { item_id: CALL.id, output_index: index };
  return [
    {
      type: 'response.output_item.added',
      output_index: index,
      item: { ...CALL, status: 'in_progress', arguments: '' },
    },
    { type: 'response.function_call_arguments.delta', ...at, delta: '{"city":' },
    { type: 'response.function_call_arguments.delta', ...at, delta: '"Paris"}' },
    { type: 'response.function_call_arguments.done', ...at, name: CALL.name, arguments: CALL.arguments },
    { type: 'response.output_item.done', output_index: index, item: CALL },
  ];
}

/** Each event numbered as OpenAI numbers them. */
function numbered(events: object[]): object[] {
  return events.map((event, index) => ({ ...event, sequence_number: index }));
}

/** {@link REASONED_ANSWER} as OpenAI streams it. */
export const REASONED_EVENTS = numbered([
  { type: 'response.created', response: started },
  { type: 'response.in_progress', response: started },
  ...reasoningEvents(0),
  ...messageEvents(1, ['Par', 'is.']),
  { type: 'response.completed', response: REASONED_ANSWER },
]);

/** {@link CALLING_ANSWER} as OpenAI streams it. */
export const CALLING_EVENTS = numbered([
  { type: 'response.created', response: started },
  { type: 'response.in_progress', response: started },
  ...reasoningEvents(0),
  ...messageEvents(1, ['Let me ', 'look.']),
  ...callEvents(2),
  { type: 'response.completed', response: CALLING_ANSWER },
]);

/** `events` framed as OpenAI's server frames them: each with its `event:` line. */
export function responsesSse(events: readonly object[]): string {
  return events
    .map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join('');
}

/** A short answer of `pieces` with no reasoning, streamed: what a model says once it has a tool's result. */
export function textAnswerEvents(pieces: string[]): object[] {
  const text = pieces.join('');
  const part = { type: 'output_text', text, annotations: [], logprobs: [] };
  const answer = {
    ...HEAD,
    id: 'resp_upstream_s2',
    status: 'completed',
    output: [{ ...MESSAGE, id: 'msg_upstream_s2', content: [part] }],
    usage: { input_tokens: 60, output_tokens: 4, total_tokens: 64 },
  };
  const events = messageEvents(0, pieces).map((event) =>
    JSON.parse(JSON.stringify(event).replaceAll(MESSAGE.id, 'msg_upstream_s2')),
  );
  return numbered([
    { type: 'response.created', response: { ...started, id: answer.id } },
    ...events,
    { type: 'response.completed', response: answer },
  ]);
}

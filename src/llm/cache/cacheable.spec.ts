import type { ChatChoice, ChatCompletion } from '../chat.types';
import { asCacheable, isCacheable } from './cacheable';

const choice = (change: Partial<ChatChoice> = {}, message: Record<string, unknown> = {}): ChatChoice => ({
  index: 0,
  message: { role: 'assistant', content: 'Paris.', refusal: null, ...message },
  finish_reason: 'stop',
  logprobs: null,
  ...change,
});

const completion = (choices: ChatChoice[] = [choice()], extra: Partial<ChatCompletion> = {}): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_767_225_600,
  model: 'gpt-4o-mini',
  choices,
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
  ...extra,
});

const TOOL_CALL = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } };

describe('isCacheable', () => {
  it.each<[string, ChatCompletion]>([
    ['a text answer that stopped', completion()],
    ['a text answer cut at the output cap', completion([choice({ finish_reason: 'length' })])],
    ['a text answer with an empty tool_calls list', completion([choice({}, { tool_calls: [] })])],
    ['a text answer without a refusal field', completion([choice({}, { refusal: undefined })])],
  ])('stores %s', (_label, answer) => {
    expect(isCacheable(answer)).toBe(true);
    expect(asCacheable(answer)).toBe(answer);
  });

  it.each<[string, ChatCompletion]>([
    ['tool calls', completion([choice({ finish_reason: 'tool_calls' }, { content: null, tool_calls: [TOOL_CALL] })])],
    ['tool calls that end with stop', completion([choice({}, { tool_calls: [TOOL_CALL] })])],
    ['text beside tool calls', completion([choice({ finish_reason: 'tool_calls' }, { tool_calls: [TOOL_CALL] })])],
    ['a legacy function call', completion([choice({}, { function_call: { name: 'weather', arguments: '{}' } })])],
    ['a refusal', completion([choice({}, { content: null, refusal: 'I cannot help with that.' })])],
    ['a refusal beside text', completion([choice({}, { refusal: 'Partly refused.' })])],
    ['a content_filter stop', completion([choice({ finish_reason: 'content_filter' })])],
    ['an unknown finish reason', completion([choice({ finish_reason: 'error' as never })])],
    ['no content', completion([choice({}, { content: null })])],
    ['empty content', completion([choice({}, { content: '' })])],
    ['content as parts', completion([choice({}, { content: [{ type: 'text', text: 'Paris.' }] })])],
    ['two choices (n > 1)', completion([choice(), choice({ index: 1 })])],
    ['no choice', completion([])],
    ['a choice at another index', completion([choice({ index: 1 })])],
    ['another object', completion(undefined, { object: 'chat.completion.chunk' as never })],
    ['no usage', completion(undefined, { usage: undefined as never })],
  ])('never stores an answer with %s', (_label, answer) => {
    expect(isCacheable(answer)).toBe(false);
    expect(asCacheable(answer)).toBeNull();
  });

  it('never stores an answer to a request for more than one choice, even with one choice', () => {
    expect(isCacheable(completion(), { n: 2 })).toBe(false);
    expect(isCacheable(completion(), { n: 1 })).toBe(true);
    expect(isCacheable(completion(), {})).toBe(true);
  });

  it.each([
    ['null', null],
    ['a string', 'Paris.'],
    ['an array', [completion()]],
    ['an error body', { error: { message: 'Rate limit reached', type: 'rate_limit_error', param: null, code: null } }],
    ['choices that are not a list', { ...completion(), choices: { 0: choice() } }],
    ['a message that is not an object', { ...completion(), choices: [{ ...choice(), message: 'Paris.' }] }],
  ])('reads %s, of unknown shape, as not cacheable without throwing', (_label, value) => {
    expect(asCacheable(value)).toBeNull();
  });
});

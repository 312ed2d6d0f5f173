import type { ChatRequest } from '../../chat.types';
import { FIELDS_NEVER_SEMANTIC, isSemanticCacheable, questionText } from './semantic-cacheable';

const QUESTION: ChatRequest = {
  model: 'chat',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0,
};

describe('isSemanticCacheable', () => {
  it('takes a plain question', () => {
    expect(isSemanticCacheable(QUESTION)).toBe(true);
  });

  it.each<[string, Partial<ChatRequest>]>([
    ['tools', { tools: [{ type: 'function', function: { name: 'weather' } }] }],
    ['an empty list of tools', { tools: [] }],
    ['tool_choice', { tool_choice: 'none' }],
    ['legacy functions', { functions: [{ name: 'weather' }] }],
    ['a legacy function_call', { function_call: 'auto' }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['a text response_format', { response_format: { type: 'text' } }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['n of 2', { n: 2 }],
  ])('refuses a request with %s', (_label, change) => {
    expect(isSemanticCacheable({ ...QUESTION, ...change })).toBe(false);
  });

  it('lists the fields it refuses', () => {
    expect([...FIELDS_NEVER_SEMANTIC].sort()).toEqual(
      ['function_call', 'functions', 'logprobs', 'response_format', 'tool_choice', 'tools', 'top_logprobs'].sort(),
    );
  });

  it.each<[string, Partial<ChatRequest>]>([
    ['n of 1', { n: 1 }],
    ['logprobs: false', { logprobs: false }],
    ['tools: null', { tools: null } as unknown as Partial<ChatRequest>],
    ['stream: true', { stream: true }],
    ['a seed and stop sequences', { seed: 7, stop: ['\n'] }],
  ])('takes a request with %s', (_label, change) => {
    expect(isSemanticCacheable({ ...QUESTION, ...change })).toBe(true);
  });

  it.each<[string, ChatRequest['messages']]>([
    ['ends with an assistant message', [...QUESTION.messages, { role: 'assistant', content: 'Paris' }]],
    ['ends with a tool result', [{ role: 'tool', content: '{"temp":21}', tool_call_id: 'c1' }]],
    ['ends with a system message', [{ role: 'system', content: 'Be brief.' }]],
    [
      'asks about an image',
      [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
    ],
    [
      'mixes text and an image',
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'https://x/y.png' } },
          ],
        },
      ],
    ],
    ['asks nothing but white space', [{ role: 'user', content: '  \n ' }]],
    ['asks with empty content', [{ role: 'user', content: '' }]],
    ['asks with no content', [{ role: 'user', content: null }]],
    ['has no messages', []],
  ])('refuses a conversation that %s', (_label, messages) => {
    expect(isSemanticCacheable({ ...QUESTION, messages })).toBe(false);
  });

  it('takes a question given as text parts', () => {
    const parts: ChatRequest = {
      ...QUESTION,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Capital' },
            { type: 'text', text: 'of France?' },
          ],
        },
      ],
    };

    expect(isSemanticCacheable(parts)).toBe(true);
    expect(questionText(parts.messages[0])).toBe('Capital\nof France?');
  });

  it('takes a conversation whose earlier turns hold images or tool calls: those must match exactly', () => {
    const earlier: ChatRequest = {
      ...QUESTION,
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
        { role: 'assistant', content: 'A cat.' },
        { role: 'user', content: 'What colour is it?' },
      ],
    };

    expect(isSemanticCacheable(earlier)).toBe(true);
  });
});

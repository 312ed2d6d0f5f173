import type { ChatRequest } from '../../chat.types';
import { semanticLookupKey } from './semantic-key';

const SCOPE = 'chat#digest';
const EMBEDDER = 'hashing:v1:1024';

const REQUEST: ChatRequest = {
  model: 'chat',
  messages: [
    { role: 'system', content: 'Answer in one sentence.' },
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.2,
  max_tokens: 100,
};

const key = (request: ChatRequest, tenant = 'acme', scope = SCOPE, embedder = EMBEDDER) =>
  semanticLookupKey(tenant, scope, request, embedder);

const asking = (question: string, request: ChatRequest = REQUEST): ChatRequest => ({
  ...request,
  messages: [...request.messages.slice(0, -1), { role: 'user', content: question }],
});

describe('semanticLookupKey', () => {
  it('compares the last message’s text and nothing else', () => {
    expect(key(REQUEST).question).toBe('What is the capital of France?');
  });

  it('puts two questions in one context into one partition, with an entry each', () => {
    const france = key(REQUEST);
    const spain = key(asking('What is the capital of Spain?'));

    expect(spain.partition).toBe(france.partition);
    expect(spain.questionId).not.toBe(france.questionId);
    expect(france.partition).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same for the question given as text parts', () => {
    const parts = {
      ...REQUEST,
      messages: [
        ...REQUEST.messages.slice(0, -1),
        { role: 'user' as const, content: [{ type: 'text', text: 'What is the capital of France?' }] },
      ],
    };

    expect(key(parts)).toEqual(key(REQUEST));
  });

  it.each<[string, (request: ChatRequest) => ChatRequest]>([
    ['temperature', (r) => ({ ...r, temperature: 0.3 })],
    ['leaving temperature out', ({ temperature: _t, ...r }) => r as ChatRequest],
    ['top_p', (r) => ({ ...r, top_p: 0.9 })],
    ['max_tokens', (r) => ({ ...r, max_tokens: 101 })],
    ['max_completion_tokens', (r) => ({ ...r, max_completion_tokens: 100 })],
    ['stop', (r) => ({ ...r, stop: ['\n'] })],
    ['seed', (r) => ({ ...r, seed: 1 })],
    ['presence_penalty', (r) => ({ ...r, presence_penalty: 0.5 })],
    ['the model', (r) => ({ ...r, model: 'chat-large' })],
    ['a provider-specific parameter', (r) => ({ ...r, top_k: 40 })],
    [
      'the system prompt',
      (r) => ({ ...r, messages: [{ role: 'system', content: 'Be verbose.' }, ...r.messages.slice(1)] }),
    ],
    [
      'an earlier turn',
      (r) => ({ ...r, messages: [r.messages[0], { role: 'user', content: 'Hey' }, ...r.messages.slice(2)] }),
    ],
    ['the number of turns', (r) => ({ ...r, messages: r.messages.slice(2) })],
    [
      'the question’s author name',
      (r) => ({ ...r, messages: [...r.messages.slice(0, -1), { ...r.messages[3], name: 'al' }] }),
    ],
  ])('starts another partition for another %s', (_label, change) => {
    expect(key(change(REQUEST)).partition).not.toBe(key(REQUEST).partition);
  });

  it('starts another partition for another tenant, route scope or embedder', () => {
    const base = key(REQUEST).partition;

    expect(key(REQUEST, 'globex').partition).not.toBe(base);
    expect(key(REQUEST, 'acme', 'chat#other').partition).not.toBe(base);
    expect(key(REQUEST, 'acme', SCOPE, 'hashing:v1:2048').partition).not.toBe(base);
  });

  it.each([
    ['stream', true],
    ['stream_options', { include_usage: true }],
    ['user', 'end-user-42'],
    ['prompt_cache_key', 'conv-7'],
  ])('leaves %s out, as the exact cache does', (field, value) => {
    expect(key({ ...REQUEST, [field]: value })).toEqual(key(REQUEST));
  });

  it('cannot be forged by a request field named like the scope', () => {
    const forged = { ...REQUEST, tenant: 'globex', scope: SCOPE } as ChatRequest;

    expect(key(forged, 'acme').partition).not.toBe(key(REQUEST, 'globex').partition);
  });

  it('leaves the request as it was', () => {
    const request = structuredClone({ ...REQUEST, stream: true });
    const before = structuredClone(request);

    key(request);

    expect(request).toEqual(before);
  });

  it.each<[string, () => unknown]>([
    ['an empty tenant', () => key(REQUEST, '')],
    ['an empty scope', () => key(REQUEST, 'acme', '')],
    ['a request with tools', () => key({ ...REQUEST, tools: [] })],
  ])('refuses %s with a RangeError', (_label, make) => {
    expect(make).toThrow(RangeError);
  });
});

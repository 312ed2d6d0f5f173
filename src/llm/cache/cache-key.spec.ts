import type { LlmTargetConfig } from '../llm.options';
import type { ChatRequest } from '../chat.types';
import { cacheDirectives, exactCacheKey, FIELDS_NOT_KEYED, routeCacheScope } from './cache-key';

const ROUTE = 'chat#digest';

const REQUEST: ChatRequest = {
  model: 'chat',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Weather in Paris?' },
  ],
  temperature: 0.2,
  tools: [
    {
      type: 'function',
      function: {
        name: 'weather',
        description: 'Current weather',
        parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } } },
      },
    },
  ],
  tool_choice: 'auto',
};

const key = (request: ChatRequest, tenant = 'acme', route = ROUTE) => exactCacheKey(tenant, route, request);

describe('exactCacheKey', () => {
  it('is the SHA-256 hex of the scoped request', () => {
    expect(key(REQUEST)).toMatch(/^[0-9a-f]{64}$/);
    expect(key(REQUEST)).toBe(key(structuredClone(REQUEST)));
  });

  it('is the same for the same request in another key order, at every depth', () => {
    const reordered: ChatRequest = {
      tool_choice: 'auto',
      tools: [
        {
          function: {
            parameters: { properties: { unit: { enum: ['c', 'f'] }, city: { type: 'string' } }, type: 'object' },
            description: 'Current weather',
            name: 'weather',
          },
          type: 'function',
        },
      ],
      temperature: 0.2,
      messages: [
        { content: 'You are terse.', role: 'system' },
        { content: 'Weather in Paris?', role: 'user' },
      ],
      model: 'chat',
    };

    expect(key(reordered)).toBe(key(REQUEST));
  });

  it('differs between tenants and between routes', () => {
    expect(key(REQUEST, 'team-a')).not.toBe(key(REQUEST, 'team-b'));
    expect(key(REQUEST, 'acme', 'chat#one')).not.toBe(key(REQUEST, 'acme', 'chat#two'));
  });

  it('cannot be forged by a request field named like the scope', () => {
    const forged = { ...REQUEST, tenant: 'team-a', route: ROUTE } as ChatRequest;

    expect(key(forged, 'team-b')).not.toBe(key(REQUEST, 'team-a'));
    expect(key(forged, 'team-b')).not.toBe(key(REQUEST, 'team-b'));
  });

  it.each([
    ['stream', true],
    ['stream_options', { include_usage: true }],
    ['user', 'end-user-42'],
    ['safety_identifier', 'hashed-end-user-42'],
    ['prompt_cache_key', 'conversation-7'],
  ])('leaves %s out: it does not change the answer', (field, value) => {
    expect(key({ ...REQUEST, [field]: value })).toBe(key(REQUEST));
  });

  it('leaves out exactly the fields it documents', () => {
    expect([...FIELDS_NOT_KEYED].sort()).toEqual(
      ['prompt_cache_key', 'safety_identifier', 'stream', 'stream_options', 'user'].sort(),
    );
  });

  it.each<[string, Partial<ChatRequest> | ((request: ChatRequest) => ChatRequest)]>([
    ['the model', { model: 'chat-large' }],
    ['a message text', (r) => ({ ...r, messages: [r.messages[0], { role: 'user', content: 'Weather in Lyon?' }] })],
    ['the order of messages', (r) => ({ ...r, messages: [...r.messages].reverse() })],
    ['a role', (r) => ({ ...r, messages: [{ ...r.messages[0], role: 'developer' }, r.messages[1]] })],
    ['a message name', (r) => ({ ...r, messages: [r.messages[0], { ...r.messages[1], name: 'alice' }] })],
    [
      'text given as parts instead of a string',
      (r) => ({
        ...r,
        messages: [r.messages[0], { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }],
      }),
    ],
    ['max_tokens', { max_tokens: 100 }],
    ['max_completion_tokens', { max_completion_tokens: 100 }],
    ['temperature', { temperature: 0.3 }],
    ['leaving temperature out', { temperature: undefined }],
    ['top_p', { top_p: 0.9 }],
    ['stop', { stop: ['\n'] }],
    ['tools', { tools: [] }],
    ['tool_choice', { tool_choice: 'required' }],
    ['parallel_tool_calls', { parallel_tool_calls: false }],
    ['n', { n: 2 }],
    ['seed', { seed: 7 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: 0.5 }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 2 }],
    ['reasoning_effort', { reasoning_effort: 'high' }],
    ['metadata', { metadata: { purpose: 'eval' } }],
    ['a provider-specific parameter (top_k)', { top_k: 40 }],
    ['a provider-specific parameter (num_ctx)', { num_ctx: 8192 }],
  ])('changes with %s', (_label, change) => {
    const changed = typeof change === 'function' ? change(REQUEST) : { ...REQUEST, ...change };

    expect(key(changed)).not.toBe(key(REQUEST));
  });

  it('treats a field set to undefined as absent, and null as a value', () => {
    const { temperature: _temperature, ...without } = REQUEST;
    const withoutTemperature = key(without as ChatRequest);

    expect(key({ ...without, temperature: undefined } as ChatRequest)).toBe(withoutTemperature);
    expect(key({ ...without, temperature: null } as unknown as ChatRequest)).not.toBe(withoutTemperature);
  });

  it('leaves the request as it was', () => {
    const request: ChatRequest = { ...REQUEST, stream: true, user: 'u', stream_options: { include_usage: true } };
    const before = structuredClone(request);

    key(request);

    expect(request).toEqual(before);
  });

  it.each([
    ['an empty tenant', '', ROUTE],
    ['an empty route', 'acme', ''],
  ])('refuses %s with a RangeError', (_label, tenant, route) => {
    expect(() => exactCacheKey(tenant, route, REQUEST)).toThrow(RangeError);
  });

  it('keys a request as it came on what changes its answer, not on what never does', () => {
    const native = (body: Record<string, unknown>) =>
      exactCacheKey('acme', ROUTE, REQUEST, { format: 'openai-responses', body, betas: [], extraInputTokens: 0 });
    const body = { input: 'hi', reasoning: { effort: 'high' } };
    expect(native({ ...body, user: 'u1', safety_identifier: 's1', prompt_cache_key: 'p1', metadata: { a: 'b' } })).toBe(
      native(body),
    );
    expect(native({ ...body, reasoning: { effort: 'low' } })).not.toBe(native(body));
    expect(native(body)).not.toBe(key(REQUEST));
  });
});

describe('routeCacheScope', () => {
  const target = (model: string, extra: Partial<LlmTargetConfig> = {}): LlmTargetConfig => ({
    provider: 'openai',
    model,
    baseUrl: 'https://api.openai.com/v1',
    ...extra,
  });
  const route = { targets: [target('gpt-4o-mini'), target('gpt-4o')], maxOutputTokens: 4096 };

  it('names the route and digests what shapes its answers', () => {
    expect(routeCacheScope('chat', route)).toMatch(/^chat#[0-9a-f]{64}$/);
    expect(routeCacheScope('chat', structuredClone(route))).toBe(routeCacheScope('chat', route));
  });

  it.each([
    ['the name', () => routeCacheScope('chat-2', route)],
    [
      'a target’s model',
      () => routeCacheScope('chat', { ...route, targets: [target('gpt-4.1-mini'), target('gpt-4o')] }),
    ],
    ['the order of targets', () => routeCacheScope('chat', { ...route, targets: [...route.targets].reverse() })],
    [
      'a target’s base URL',
      () =>
        routeCacheScope('chat', {
          ...route,
          targets: [target('gpt-4o-mini', { baseUrl: 'http://vllm:8000/v1' }), target('gpt-4o')],
        }),
    ],
    ['maxOutputTokens', () => routeCacheScope('chat', { ...route, maxOutputTokens: 256 })],
  ])('changes with %s', (_label, scope) => {
    expect(scope()).not.toBe(routeCacheScope('chat', route));
  });

  it('changes with a fake target’s script', () => {
    const scripted = (text: string) => ({
      ...route,
      targets: [target('m', { provider: 'fake', script: [{ text }] })],
    });

    expect(routeCacheScope('chat', scripted('one'))).not.toBe(routeCacheScope('chat', scripted('two')));
  });

  it('does not change with a target’s API key or timeout', () => {
    const rotated = {
      ...route,
      targets: [target('gpt-4o-mini', { apiKey: 'sk-new', timeoutMs: 5_000 }), target('gpt-4o', { apiKey: 'sk-new' })],
    };

    expect(routeCacheScope('chat', rotated)).toBe(routeCacheScope('chat', route));
  });
});

describe('cacheDirectives', () => {
  it.each<[string | string[] | undefined, { lookup: boolean; store: boolean }]>([
    [undefined, { lookup: true, store: true }],
    ['', { lookup: true, store: true }],
    ['max-age=60, private', { lookup: true, store: true }],
    ['no-cache', { lookup: false, store: true }],
    ['No-Cache', { lookup: false, store: true }],
    ['no-store', { lookup: false, store: false }],
    ['NO-STORE', { lookup: false, store: false }],
    ['no-cache, no-store', { lookup: false, store: false }],
    ['max-age=0,no-store', { lookup: false, store: false }],
    ['  private ,  no-cache  ', { lookup: false, store: true }],
    ['no-cache="x-field"', { lookup: false, store: true }],
    ['no-caching, no-stored, x-no-store', { lookup: true, store: true }],
    ['ext="a, no-store", private', { lookup: true, store: true }],
    ['ext="a \\" , no-store"', { lookup: true, store: true }],
    [['private', 'no-store'], { lookup: false, store: false }],
    [['no-cache'], { lookup: false, store: true }],
  ])('reads %p as %p', (header, directives) => {
    expect(cacheDirectives(header)).toEqual(directives);
  });
});

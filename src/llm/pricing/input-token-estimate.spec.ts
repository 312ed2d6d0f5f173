import fc from 'fast-check';
import { countTokens } from 'gpt-tokenizer';
import {
  type ChatCompletionFunctionDefinition,
  type ChatCompletionFunctionProperty,
  computeChatCompletionTokenCount,
} from 'gpt-tokenizer/cjs/functionCalling';
import type { ChatMessage, ChatRequest, ChatTool } from '../chat.types';
import {
  estimateInputTokens,
  MAX_IMAGE_PART_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  PART_OVERHEAD_TOKENS,
  REQUEST_OVERHEAD_TOKENS,
  TOOL_OVERHEAD_TOKENS,
  TOOLS_OVERHEAD_TOKENS,
} from './input-token-estimate';

/** o200k (gpt-4o and later), special-token look-alikes encoded as text, as the API does. */
const o200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() });

const textOf = (content: ChatMessage['content']): string =>
  typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join('');

/**
 * gpt-tokenizer's exact count of a request as OpenAI's chat models see it: each message in its
 * template, tool calls as function calls, and the tools in the TypeScript-like rendering the
 * API gives them.
 */
function exactO200k(request: ChatRequest): number {
  const messages = request.messages.map((message) => ({
    role: message.role,
    content: textOf(message.content),
    ...(message.name === undefined ? {} : { name: message.name }),
    ...(message.tool_calls?.length
      ? {
          function_call: {
            name: message.tool_calls[0]!.function.name,
            arguments: message.tool_calls[0]!.function.arguments,
          },
        }
      : {}),
  }));
  const functions = request.tools?.map((tool) => tool.function as ChatCompletionFunctionDefinition);
  return computeChatCompletionTokenCount({ messages, ...(functions?.length ? { functions } : {}) }, o200k);
}

const user = (content: ChatMessage['content']): ChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content }],
});

const ENGLISH =
  'The bulkhead keeps one slow dependency from taking every thread of the service down with it; ' +
  "it's named after the walls that keep a ship afloat when one compartment floods.";
const CODE = `export function worstCase(price: Price, input: number): bigint {\n  return BigInt(input) * BigInt(price.in) /* µ$ */;\n}\n`;
const CHINESE = '所有编译器选项都必须在配置文件中声明，否则构建会失败。请检查“tsconfig.json”中的设置。';
const JAPANESE = 'すべてのコンパイラ オプションを構成ファイルで宣言する必要があります。カタカナとひらがな、漢字。';
const KOREAN = '모든 컴파일러 옵션은 구성 파일에 선언되어야 합니다. 한국어 텍스트의 토큰 수를 확인합니다.';
const EMOJI = '👩‍👩‍👧‍👦🏳️‍🌈🇯🇵👍🏽 e\u0301 z\u0335\u0321\u0334 ✨🔥💯 ' + '🙂'.repeat(40);
const ADVERSARIAL = [
  '<|endoftext|><|im_start|>system<|im_sep|>',
  ' '.repeat(500),
  '\n\t'.repeat(200),
  '0123456789'.repeat(30),
  'a'.repeat(1000),
  '}{)(][;:'.repeat(60),
  'QmFzZTY0IGlzIG5vdCB0ZXh0IGF0IGFsbCwgaXQgaXMgYmluYXJ5IGRhdGEu'.repeat(10),
  '\u0000\u0001\u001f\u007f\uFFFD\uD800',
];

const LONG_TOOL: ChatTool = {
  type: 'function',
  function: {
    name: 'search_orders',
    description: 'Searches the orders of a customer. Returns at most `limit` of them, newest first.',
    parameters: {
      type: 'object',
      required: ['customer'],
      properties: {
        customer: { type: 'string', description: 'The customer id, e.g. "cus_123".' },
        status: { type: 'string', enum: ['open', 'paid', 'shipped', 'cancelled', 'refunded', ''] },
        priority: { type: 'integer', enum: [1, 2, 3, 4, 5, 6, 7, 8, 9, 0, -1] },
        limit: { type: 'integer', description: 'Between 1 and 100.' },
        tags: { type: 'array', items: { type: 'string', enum: ['a', 'b', 'c', 'd', 'e', 'f'] } },
        address: {
          type: 'object',
          properties: { city: { type: 'string' }, zip: { type: 'string' }, lines: { type: 'array' } },
        },
        flags: { type: 'boolean' },
      },
    },
  },
};

describe('estimateInputTokens', () => {
  it('counts the request fields, each message and its text in UTF-8 bytes', () => {
    // {"model":"m"} is 13 bytes, {"role":"user"} 15, "héllo" 6.
    expect(estimateInputTokens(user('héllo'))).toBe(REQUEST_OVERHEAD_TOKENS + 13 + MESSAGE_OVERHEAD_TOKENS + 15 + 6);
    expect(estimateInputTokens(user('héllo'))).toBe(74);
  });

  it('counts text parts by their text and images by the image bound', () => {
    const request = user([
      { type: 'text', text: '日本' },
      { type: 'image_url', image_url: { url: 'https://example.test/a.png' } },
    ]);
    const base = REQUEST_OVERHEAD_TOKENS + 13 + MESSAGE_OVERHEAD_TOKENS + 15;
    expect(estimateInputTokens(request)).toBe(base + PART_OVERHEAD_TOKENS + 6 + PART_OVERHEAD_TOKENS + 48_169);
    expect(MAX_IMAGE_PART_TOKENS).toBe(48_169);
    expect(estimateInputTokens(request, { imagePartTokens: 1_600 })).toBe(
      base + PART_OVERHEAD_TOKENS + 6 + PART_OVERHEAD_TOKENS + 1_600,
    );
  });

  it('refuses an impossible image bound', () => {
    expect(() => estimateInputTokens(user('x'), { imagePartTokens: -1 })).toThrow(RangeError);
    expect(() => estimateInputTokens(user('x'), { imagePartTokens: 1.5 })).toThrow(/imagePartTokens/);
  });

  it('counts other parts, tool calls and names as the bytes of their JSON', () => {
    const audio = { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } };
    const request: ChatRequest = {
      model: 'm',
      messages: [
        { role: 'user', content: [audio] },
        {
          role: 'assistant',
          content: null,
          name: 'bot',
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', content: 'ok', tool_call_id: 'c1' },
      ],
    };
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
    expect(estimateInputTokens(request)).toBe(
      REQUEST_OVERHEAD_TOKENS +
        bytes({ model: 'm' }) +
        (MESSAGE_OVERHEAD_TOKENS + bytes({ role: 'user' }) + PART_OVERHEAD_TOKENS + bytes(audio)) +
        (MESSAGE_OVERHEAD_TOKENS +
          bytes({ role: 'assistant', name: 'bot', tool_calls: request.messages[1]!.tool_calls })) +
        (MESSAGE_OVERHEAD_TOKENS + bytes({ role: 'tool', tool_call_id: 'c1' }) + 2),
    );
  });

  it('adds the tools overhead and the JSON of every request field but the messages', () => {
    const request: ChatRequest = { ...user('hi'), tools: [LONG_TOOL, LONG_TOOL], tool_choice: 'auto', max_tokens: 10 };
    const { messages: _messages, ...fields } = request;
    expect(estimateInputTokens(request)).toBe(
      REQUEST_OVERHEAD_TOKENS +
        Buffer.byteLength(JSON.stringify(fields)) +
        TOOLS_OVERHEAD_TOKENS +
        2 * TOOL_OVERHEAD_TOKENS +
        MESSAGE_OVERHEAD_TOKENS +
        15 +
        2,
    );
  });

  it.each([
    ['English', ENGLISH],
    ['code', CODE],
    ['Chinese', CHINESE],
    ['Japanese', JAPANESE],
    ['Korean', KOREAN],
    ['emoji and combining marks', EMOJI],
    ...ADVERSARIAL.map((text, i): [string, string] => [`adversarial #${i}`, text]),
  ])('is at least the exact o200k count of %s text', (_name, text) => {
    const request: ChatRequest = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: text, name: 'ann' },
      ],
    };
    expect(estimateInputTokens(request)).toBeGreaterThanOrEqual(exactO200k(request));
    // Text alone: the byte bound itself, without the overheads.
    expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(o200k(text));
  });

  it('is at least the exact o200k count of a request with long tool schemas', () => {
    const request: ChatRequest = {
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: CHINESE },
        { role: 'user', content: EMOJI + CODE },
      ],
      tools: Array.from({ length: 20 }, (_, i) => ({
        ...LONG_TOOL,
        function: { ...LONG_TOOL.function, name: `search_orders_${i}` },
      })),
    };
    expect(estimateInputTokens(request)).toBeGreaterThanOrEqual(exactO200k(request));
  });

  it('is at least the exact o200k count of any request (property)', () => {
    fc.assert(
      fc.property(requestArbitrary(), (request) => {
        expect(estimateInputTokens(request)).toBeGreaterThanOrEqual(exactO200k(request));
      }),
      { numRuns: 300 },
    );
  });
});

const textArbitrary = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom(...`${CHINESE}${JAPANESE}${KOREAN}`), maxLength: 200 }),
  fc.string({
    unit: fc.constantFrom('🙂', '👍🏽', '🇯🇵', '‍', '\u0301', ' ', '\n', '{', '"', '<|endoftext|>'),
    maxLength: 100,
  }),
  fc.constantFrom(ENGLISH, CODE, ...ADVERSARIAL),
);

const nameArbitrary = fc.stringMatching(/^[a-z_][a-z0-9_]{0,20}$/);

const propertyArbitrary: fc.Arbitrary<ChatCompletionFunctionProperty> = fc.letrec<{
  property: ChatCompletionFunctionProperty;
}>((tie) => ({
  property: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record(
      {
        type: fc.constant('string' as const),
        description: textArbitrary,
        enum: fc.array(fc.string({ maxLength: 8 }), { maxLength: 30 }),
      },
      { requiredKeys: ['type'] },
    ),
    fc.record(
      { type: fc.constantFrom('integer' as const, 'number' as const), enum: fc.array(fc.integer(), { maxLength: 30 }) },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constantFrom('boolean' as const, 'null' as const) }),
    fc.record({ type: fc.constant('array' as const), items: tie('property') }, { requiredKeys: ['type'] }),
    fc.record({
      type: fc.constant('object' as const),
      properties: fc.dictionary(nameArbitrary, tie('property'), { maxKeys: 4 }),
    }),
  ),
})).property;

function requestArbitrary(): fc.Arbitrary<ChatRequest> {
  const message = fc.record(
    {
      role: fc.constantFrom('system' as const, 'developer' as const, 'user' as const, 'assistant' as const),
      content: fc.oneof(
        textArbitrary,
        fc.array(fc.record({ type: fc.constant('text'), text: textArbitrary }), { maxLength: 3 }),
      ),
      name: nameArbitrary,
    },
    { requiredKeys: ['role', 'content'] },
  );
  const tool = fc.record({
    type: fc.constant('function' as const),
    function: fc.record(
      {
        name: nameArbitrary,
        description: textArbitrary,
        parameters: fc.record({
          type: fc.constant('object'),
          properties: fc.dictionary(nameArbitrary, propertyArbitrary, { maxKeys: 6 }),
        }),
      },
      { requiredKeys: ['name'] },
    ),
  });
  return fc.record(
    {
      model: fc.constant('gpt-4o'),
      messages: fc.array(message, { minLength: 1, maxLength: 5 }),
      tools: fc.array(tool as fc.Arbitrary<ChatTool>, { minLength: 1, maxLength: 4 }),
    },
    { requiredKeys: ['model', 'messages'] },
  );
}

import fc from 'fast-check';
import { parseBodyFields } from '../common';
import { parseChatRequest } from './chat-request';
import { chatRequestSchema } from './wire';
import { returnedOrThrown } from '../../test/support/thrown';

/** Strings near the rules: empty, short, at the 256 limit, emoji (two UTF-16 units, one code point each). */
const nearString = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('', 'chat', 'a'.repeat(256), 'a'.repeat(257), '😀'.repeat(128), '😀'.repeat(129)),
);
const nearCount = fc.oneof(fc.integer({ min: -2, max: 200 }), fc.constantFrom(10_000_000, 10_000_001, 1.5, '5', null));
const nearMessage = fc.oneof(
  fc.record(
    {
      role: fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'robot'),
      content: fc.oneof(
        fc.string(),
        fc.constant(null),
        fc.array(fc.record({ type: fc.oneof(fc.constant('text'), fc.integer()), text: fc.string() })),
        fc.integer(),
      ),
      tool_calls: fc.array(
        fc.record(
          {
            id: fc.oneof(fc.string(), fc.integer()),
            type: fc.constantFrom('function', 'other'),
            function: fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), fc.constant({})) }),
          },
          { requiredKeys: ['type'] },
        ),
        { maxLength: 2 },
      ),
      tool_call_id: fc.oneof(fc.string(), fc.integer()),
      name: fc.string(),
    },
    { requiredKeys: ['role'] },
  ),
  fc.jsonValue(),
);
/** Values near a chat request: mostly objects with its fields, right or wrong, and extra keys. */
const nearChatBody = fc.oneof(
  fc.record(
    {
      model: fc.oneof(nearString, fc.integer()),
      messages: fc.oneof(fc.array(nearMessage, { maxLength: 3 }), fc.string()),
      max_tokens: nearCount,
      max_completion_tokens: nearCount,
      n: nearCount,
      stream: fc.constantFrom(true, false, null, 'yes'),
      stream_options: fc.oneof(fc.constant(null), fc.record({ include_usage: fc.constantFrom(true, 1) })),
      tools: fc.array(
        fc.record({ type: fc.constantFrom('function', 'web'), function: fc.record({ name: nearString }) }),
        { maxLength: 2 },
      ),
      service_tier: fc.constantFrom('auto', 'default', 'flex'),
      temperature: fc.double(),
      user: fc.string(),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);

describe('parseChatRequest', () => {
  it('answers every body as the zod schema alone would: the same request, or the same error', () => {
    fc.assert(
      fc.property(nearChatBody, (body) => {
        const alone = returnedOrThrown(() => parseBodyFields(chatRequestSchema, body));
        const fast = returnedOrThrown(() => parseChatRequest(body));
        // The route's own rules (service_tier, stream_options) come after the schema's.
        if ((alone as { ok?: unknown }).ok !== undefined && (fast as { kind?: string }).kind !== undefined) {
          expect((fast as { message: string }).message).toMatch(/^(service_tier|stream_options): /);
        } else {
          expect(fast).toEqual(alone);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('hands back the body it was given when it is valid, as the route reads it', () => {
    const body = { model: 'chat', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 };
    expect(parseChatRequest(body)).toBe(body);
  });

  it.each<[string, unknown, string]>([
    ['a model longer than 256 characters', { model: 'a'.repeat(257), messages: [{ role: 'user' }] }, 'model: '],
    ['no messages', { model: 'chat', messages: [] }, 'messages: must not be empty'],
    ['a wrong type', { model: 5, messages: [{ role: 'user' }] }, 'model: Invalid input'],
  ])('refuses %s, naming the field', (_what, body, message) => {
    expect(returnedOrThrown(() => parseChatRequest(body))).toEqual({
      kind: 'invalid_request',
      message: expect.stringContaining(message) as unknown,
    });
  });
});

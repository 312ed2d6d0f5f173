import { providerAttempt } from '../../../test/support/provider-attempt';
import type { ChatRequest, PassThroughRequest } from '../chat.types';
import type { ProviderTarget } from './llm-provider';
import { OPENAI_BASE_URL } from './openai.provider';
import { nativeResponsesBody, responsesPassThrough, speaksResponses } from './responses-pass-through';

const GPT_5: ProviderTarget = { provider: 'openai', model: 'gpt-5' };
const GPT_4O: ProviderTarget = { provider: 'openai', model: 'gpt-4o' };
const CHAT: ChatRequest = { model: 'route', messages: [{ role: 'user', content: 'hi' }] };
const NATIVE: PassThroughRequest = {
  format: 'openai-responses',
  body: {
    input: [{ type: 'reasoning', id: 'rs_1', encrypted_content: 'gAAAA', summary: [] }],
    reasoning: { effort: 'high' },
    include: ['reasoning.encrypted_content'],
    text: { verbosity: 'low' },
    max_output_tokens: 90_000,
    temperature: 0.3,
  },
  betas: [],
  extraInputTokens: 0,
};

describe('speaksResponses', () => {
  it.each([
    [GPT_5, true],
    [{ ...GPT_5, baseUrl: 'https://api.openai.com/v1' }, true],
    [{ ...GPT_5, baseUrl: 'http://127.0.0.1:8000/v1' }, false],
    [{ ...GPT_5, baseUrl: 'https://api.openai.com.example.org/v1' }, false],
    [{ ...GPT_5, baseUrl: 'http://127.0.0.1:8000/v1', responsesApi: true }, true],
    [{ ...GPT_5, responsesApi: false }, false],
    [{ provider: 'anthropic', model: 'claude' }, false],
  ])('%p: %p', (target, speaks) => {
    expect(speaksResponses(target as ProviderTarget, OPENAI_BASE_URL)).toBe(speaks);
  });
});

describe('responsesPassThrough', () => {
  it('is the Responses request for a target that speaks it, and nothing for any other request', () => {
    const attempt = { ...providerAttempt(GPT_5, CHAT), passThrough: NATIVE };
    expect(responsesPassThrough(attempt, OPENAI_BASE_URL)).toBe(NATIVE);
    const messages = { ...NATIVE, format: 'anthropic-messages' as const };
    expect(responsesPassThrough({ ...attempt, passThrough: messages }, OPENAI_BASE_URL)).toBeUndefined();
    expect(responsesPassThrough(providerAttempt(GPT_5, CHAT), OPENAI_BASE_URL)).toBeUndefined();
    const local = { ...attempt, target: { ...GPT_5, baseUrl: 'http://127.0.0.1:8000/v1' } };
    expect(responsesPassThrough(local, OPENAI_BASE_URL)).toBeUndefined();
  });
});

describe('nativeResponsesBody', () => {
  it("sends the client's body with the target's model, the attempt's cap, one answer and store false", () => {
    const body = nativeResponsesBody(providerAttempt(GPT_4O, CHAT, { maxOutputTokens: 700 }), NATIVE, false);
    expect(body).toEqual({ ...NATIVE.body, model: 'gpt-4o', max_output_tokens: 700, store: false, stream: false });
  });

  it('always asks a reasoning model for its encrypted reasoning, once, and never a model that does not reason', () => {
    const attempt = providerAttempt(GPT_5, CHAT);
    expect(nativeResponsesBody(attempt, { ...NATIVE, body: { input: 'hi' } }, false).include).toEqual([
      'reasoning.encrypted_content',
    ]);
    const asked = { ...NATIVE, body: { input: 'hi', include: ['message.output_text.logprobs'] } };
    expect(nativeResponsesBody(attempt, asked, false).include).toEqual([
      'message.output_text.logprobs',
      'reasoning.encrypted_content',
    ]);
    expect(nativeResponsesBody(attempt, NATIVE, false).include).toEqual(['reasoning.encrypted_content']);
    expect(
      nativeResponsesBody(providerAttempt(GPT_4O, CHAT), { ...NATIVE, body: { input: 'hi' } }, false).include,
    ).toBe(undefined);
  });

  it('leaves out reasoning items named by their id alone, which a target that keeps nothing cannot read', () => {
    const idOnly = { type: 'reasoning', id: 'rs_0', summary: [] };
    const input = [{ role: 'user', content: 'hi' }, idOnly, ...(NATIVE.body.input as unknown[])];
    const body = nativeResponsesBody(
      providerAttempt(GPT_5, CHAT),
      { ...NATIVE, body: { ...NATIVE.body, input } },
      false,
    );
    expect(body.input).toEqual([{ role: 'user', content: 'hi' }, ...(NATIVE.body.input as unknown[])]);
  });

  it('leaves out what a reasoning model refuses, and keeps reasoning, include, text and reasoning items', () => {
    const body = nativeResponsesBody(providerAttempt(GPT_5, CHAT, { maxOutputTokens: 700 }), NATIVE, false);
    expect(body.temperature).toBeUndefined();
    expect(body).toMatchObject({
      input: NATIVE.body.input,
      reasoning: { effort: 'high' },
      include: ['reasoning.encrypted_content'],
      text: { verbosity: 'low' },
      max_output_tokens: 700,
    });
  });
});

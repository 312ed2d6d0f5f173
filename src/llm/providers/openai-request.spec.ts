import { providerAttempt } from '../../../test/support/provider-attempt';
import type { ChatRequest } from '../chat.types';
import type { ProviderTarget } from './llm-provider';
import { openAiRequest } from './openai-request';

const GPT_4O: ProviderTarget = { provider: 'openai', model: 'gpt-4o' };
const O3_MINI: ProviderTarget = { provider: 'openai', model: 'o3-mini' };
const REQUEST: ChatRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 };

function bodyFor(target: ProviderTarget, request: ChatRequest, maxOutputTokens = 300) {
  return openAiRequest(providerAttempt(target, request, { maxOutputTokens }));
}

describe('openAiRequest', () => {
  it("writes the attempt's cap as max_completion_tokens by default", () => {
    expect(bodyFor(GPT_4O, REQUEST)).toEqual({ ...REQUEST, max_completion_tokens: 300 });
  });

  it('writes it as max_tokens for a target that takes only that', () => {
    expect(bodyFor({ ...GPT_4O, maxTokensField: 'max_tokens' }, REQUEST)).toEqual({ ...REQUEST, max_tokens: 300 });
  });

  it.each([[{ max_tokens: 900 }], [{ max_completion_tokens: 900 }], [{ max_tokens: 900, max_completion_tokens: 800 }]])(
    "never lets the client's own cap (%p) through as a second field, nor over the attempt's",
    (caps) => {
      for (const maxTokensField of ['max_completion_tokens', 'max_tokens'] as const) {
        const body = bodyFor({ ...GPT_4O, maxTokensField }, { ...REQUEST, ...caps }, 250);
        const capFields = Object.keys(body).filter((key) => key === 'max_tokens' || key === 'max_completion_tokens');
        expect(capFields).toEqual([maxTokensField]);
        expect(body[maxTokensField]).toBe(250);
      }
    },
  );

  it('drops what a reasoning model refuses, by its id', () => {
    const request = { ...REQUEST, top_p: 0.5, logit_bias: { '1': 2 }, reasoning_effort: 'low' };
    expect(bodyFor(O3_MINI, request)).toEqual({
      model: 'gpt-4o',
      messages: REQUEST.messages,
      reasoning_effort: 'low',
      max_completion_tokens: 300,
    });
  });

  it("follows the target's reasoning setting over the model's id, either way", () => {
    expect(bodyFor({ ...O3_MINI, reasoning: false }, REQUEST).temperature).toBe(0.2);
    const { temperature: _temperature, ...withoutTemperature } = REQUEST;
    expect(bodyFor({ ...GPT_4O, model: 'qwq-32b', reasoning: true }, REQUEST)).toStrictEqual({
      ...withoutTemperature,
      max_completion_tokens: 300,
    });
  });
});

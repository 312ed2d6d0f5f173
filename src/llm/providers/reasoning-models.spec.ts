import type { ChatRequest } from '../chat.types';
import { forReasoningModel, isReasoningModel, REASONING_REFUSED_PARAMETERS } from './reasoning-models';

const BASE: ChatRequest = { model: 'o3', messages: [{ role: 'user', content: 'hi' }] };

describe('isReasoningModel', () => {
  it.each([
    'o1',
    'o1-pro',
    'o3',
    'o3-mini',
    'o3-mini-2025-01-31',
    'o4-mini',
    'gpt-5',
    'gpt-5-mini',
    'gpt-5-nano-2025-08-07',
    'gpt-5-codex',
    'gpt-5.1',
    'gpt-5.1-chat-latest',
    'gpt-5.4-pro',
    'gpt-6',
  ])('%s reasons', (model) => {
    expect(isReasoningModel(model)).toBe(true);
  });

  it.each([
    'gpt-4o',
    'gpt-4o-mini',
    'gpt-4.1',
    'gpt-3.5-turbo',
    'gpt-5-chat-latest',
    'omni-moderation-latest',
    'o',
    'llama-3.1-8b',
    'openai/o3',
    'gpt-50x',
    'my-gpt-5',
  ])('%s does not', (model) => {
    expect(isReasoningModel(model)).toBe(false);
  });
});

describe('forReasoningModel', () => {
  it('drops every parameter a reasoning model refuses, and names them', () => {
    const refused = {
      temperature: 0.2,
      top_p: 0.9,
      presence_penalty: 0.5,
      frequency_penalty: 0.5,
      logprobs: true,
      top_logprobs: 3,
      logit_bias: { '50256': -100 },
      stop: ['\nObservation:'],
    };
    const { request, dropped } = forReasoningModel({ ...BASE, ...refused, seed: 7, reasoning_effort: 'low' });
    expect(request).toEqual({ ...BASE, seed: 7, reasoning_effort: 'low' });
    expect(dropped).toEqual([...REASONING_REFUSED_PARAMETERS]);
    expect(Object.keys(refused).sort()).toEqual([...REASONING_REFUSED_PARAMETERS].sort());
  });

  it('drops only what the request has', () => {
    const { request, dropped } = forReasoningModel({ ...BASE, top_p: 1, n: 2 });
    expect(request).toEqual({ ...BASE, n: 2 });
    expect(dropped).toEqual(['top_p']);
  });

  it('returns a request without any of them as it is', () => {
    const request = { ...BASE, reasoning_effort: 'high' };
    expect(forReasoningModel(request)).toEqual({ request, dropped: [] });
    expect(forReasoningModel(request).request).toBe(request);
  });

  it('leaves the request it was given alone', () => {
    const request = { ...BASE, temperature: 0 };
    forReasoningModel(request);
    expect(request).toEqual({ ...BASE, temperature: 0 });
  });
});

import type { ChatUsage } from '../chat.types';
import { chatUsage } from '../providers/messages-to-chat-answer';
import { messagesUsage, nativeUsage } from './chat-to-messages-answer';

/** Anthropic's usage of a request that wrote 300 prompt tokens to its cache, 200 of them for an hour. */
const ANTHROPIC_USAGE = {
  input_tokens: 10,
  cache_read_input_tokens: 1_000,
  cache_creation_input_tokens: 300,
  cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 200 },
  output_tokens: 5,
};

describe("Anthropic's usage and OpenAI's", () => {
  it('reads every prompt token into the prompt, and the hour-long writes apart', () => {
    expect(chatUsage(ANTHROPIC_USAGE)).toEqual({
      prompt_tokens: 1_310,
      completion_tokens: 5,
      total_tokens: 1_315,
      prompt_tokens_details: { cached_tokens: 1_000, cache_write_tokens: 300, cache_write_1h_tokens: 200 },
    });
  });

  it('says nothing of how long writes are kept when the provider did not', () => {
    const { cache_creation: _, ...withoutBreakdown } = ANTHROPIC_USAGE;

    expect(chatUsage(withoutBreakdown)?.prompt_tokens_details).toEqual({
      cached_tokens: 1_000,
      cache_write_tokens: 300,
    });
    expect(messagesUsage(chatUsage(withoutBreakdown))).not.toHaveProperty('cache_creation');
  });

  it('gives a Messages client back what Anthropic said, the breakdown of its writes included', () => {
    expect(messagesUsage(chatUsage(ANTHROPIC_USAGE))).toEqual(ANTHROPIC_USAGE);
  });

  it("shows a native answer's usage with the counts it was charged, its other fields as sent", () => {
    const billed: ChatUsage = { prompt_tokens: 96, completion_tokens: 100, total_tokens: 196 };

    expect(nativeUsage({ input_tokens: -5, output_tokens: 1e308, service_tier: 'standard' }, billed)).toEqual({
      input_tokens: 96,
      output_tokens: 100,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      service_tier: 'standard',
    });
  });
});

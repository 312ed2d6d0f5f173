import { contextWindowOf } from './context-windows';

describe('contextWindowOf', () => {
  it('knows published models by their id and their dated snapshots', () => {
    expect(contextWindowOf('openai', 'gpt-4o-mini')).toBe(128_000);
    expect(contextWindowOf('openai', 'gpt-4o-2024-08-06')).toBe(128_000);
    expect(contextWindowOf('openai', 'gpt-4.1')).toBe(1_047_576);
    expect(contextWindowOf('anthropic', 'claude-sonnet-4-5-20250929')).toBe(200_000);
  });

  it('takes the configured window over the table', () => {
    expect(contextWindowOf('openai', 'gpt-4o-mini', 64_000)).toBe(64_000);
    expect(contextWindowOf('fake', 'anything', 2_000)).toBe(2_000);
  });

  it('has none for a model it does not know, nor for a look-alike of one it does', () => {
    expect(contextWindowOf('openai', 'llama3')).toBeUndefined();
    expect(contextWindowOf('openai', 'gpt-4o-mini-tts')).toBeUndefined();
    expect(contextWindowOf('bedrock', 'anthropic.claude-3-5-sonnet-20240620-v1:0')).toBeUndefined();
    expect(contextWindowOf('fake', 'gpt-4o')).toBeUndefined();
  });
});

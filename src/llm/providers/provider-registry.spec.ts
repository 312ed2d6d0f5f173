import { FakeClock } from '../../common/fake-clock';
import { noNetwork, providerAttempt } from '../../../test/support/provider-attempt';
import { AnthropicProvider } from './anthropic.provider';
import { BedrockProvider } from './bedrock.provider';
import { FakeProvider } from './fake.provider';
import { OpenAiProvider } from './openai.provider';
import { createProvider, ProviderRegistry } from './provider-registry';

const clock = new FakeClock();
const HELLO = { model: 'fake-1', messages: [{ role: 'user' as const, content: 'hi' }] };

async function text(registry: ProviderRegistry, route: string, index: number): Promise<string | null> {
  const target = { provider: 'fake', model: 'fake-1' };
  const completion = await registry.get(route, index).complete(providerAttempt(target, HELLO, { http: noNetwork }));
  return completion.choices[0].message.content;
}

describe('createProvider', () => {
  it('builds the provider a target names', () => {
    expect(createProvider({ provider: 'openai', model: 'gpt-4o' }, clock)).toBeInstanceOf(OpenAiProvider);
    expect(createProvider({ provider: 'anthropic', model: 'claude-haiku-4-5' }, clock)).toBeInstanceOf(
      AnthropicProvider,
    );
    expect(
      createProvider({ provider: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0' }, clock),
    ).toBeInstanceOf(BedrockProvider);
    expect(createProvider({ provider: 'fake', model: 'fake-1' }, clock)).toBeInstanceOf(FakeProvider);
  });

  it('refuses a provider it does not speak', () => {
    expect(() => createProvider({ provider: 'gemini', model: 'x' }, clock)).toThrow(RangeError);
  });
});

describe('ProviderRegistry', () => {
  const script = [{ text: 'first' }, { text: 'second' }];
  const registry = () =>
    new ProviderRegistry(
      {
        chat: {
          targets: [
            { provider: 'openai', model: 'gpt-4o' },
            { provider: 'fake', model: 'fake-1', script },
            { provider: 'fake', model: 'fake-1', script },
          ],
        },
        other: { targets: [{ provider: 'fake', model: 'fake-1', script }] },
      },
      clock,
    );

  it('answers the provider of target i of route r', () => {
    const subject = registry();

    expect(subject.get('chat', 0)).toBeInstanceOf(OpenAiProvider);
    expect(subject.get('chat', 1)).toBeInstanceOf(FakeProvider);
    expect(subject.get('chat', 1)).toBe(subject.get('chat', 1));
  });

  it('keeps one script position per target, even for targets alike', async () => {
    const subject = registry();

    expect(await text(subject, 'chat', 1)).toBe('first');
    expect(await text(subject, 'chat', 1)).toBe('second');
    expect(await text(subject, 'chat', 2)).toBe('first');
    expect(await text(subject, 'other', 0)).toBe('first');
  });

  it('refuses a route or target the config does not have', () => {
    const subject = registry();

    expect(() => subject.get('nope', 0)).toThrow(RangeError);
    expect(() => subject.get('chat', 3)).toThrow(RangeError);
  });
});

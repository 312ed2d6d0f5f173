import { parseConfig } from './config.loader';
import { configOf, problemsOf } from '../../test/support/config-results';

/** A document with one LLM route of one target, `fields` over an `openai` gpt-4o. */
function document(fields: Record<string, unknown>) {
  return {
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    llm: {
      routes: { chat: { lane: 'main', targets: [{ provider: 'openai', model: 'gpt-4o', apiKey: 'k', ...fields }] } },
    },
  };
}

describe("config: an openai target's maxTokensField and reasoning", () => {
  it('reads them on an openai target, and leaves them out when not written', () => {
    const [set] = configOf(parseConfig(document({ maxTokensField: 'max_tokens', reasoning: true }), {})).llm.routes.chat
      .targets;
    const [unset] = configOf(parseConfig(document({}), {})).llm.routes.chat.targets;

    expect(set).toMatchObject({ maxTokensField: 'max_tokens', reasoning: true });
    expect(unset.maxTokensField).toBeUndefined();
    expect(unset.reasoning).toBeUndefined();
  });

  it.each([
    [{ maxTokensField: 'max_output_tokens' }, 'maxTokensField: must be one of max_completion_tokens, max_tokens'],
    [{ reasoning: 'maybe' }, 'reasoning: must be true or false'],
    [
      { provider: 'anthropic', maxTokensField: 'max_tokens' },
      'maxTokensField: only an openai target has a maxTokensField',
    ],
    [{ provider: 'fake', reasoning: true }, 'reasoning: only an openai target has a reasoning setting'],
  ])('names %p as a problem', (fields, problem) => {
    expect(problemsOf(parseConfig(document(fields), {})).join('\n')).toContain(problem);
  });
});

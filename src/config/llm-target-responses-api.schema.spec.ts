import { parseConfig } from './config.loader';
import { configOf, problemsOf } from '../../test/support/config-results';

/** A document with one LLM route of one target, `fields` over an `openai` gpt-5. */
function document(fields: Record<string, unknown>) {
  return {
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    llm: {
      routes: { chat: { lane: 'main', targets: [{ provider: 'openai', model: 'gpt-5', apiKey: 'k', ...fields }] } },
    },
  };
}

describe("config: an openai target's responsesApi", () => {
  it('reads it on an openai target, and leaves it out when not written (decided by the base URL)', () => {
    const [set] = configOf(parseConfig(document({ responsesApi: true }), {})).llm.routes.chat.targets;
    const [unset] = configOf(parseConfig(document({}), {})).llm.routes.chat.targets;

    expect(set.responsesApi).toBe(true);
    expect(unset.responsesApi).toBeUndefined();
  });

  it.each([
    [{ responsesApi: 'yes' }, 'responsesApi: must be true or false'],
    [{ provider: 'anthropic', responsesApi: true }, 'responsesApi: only an openai target has a responsesApi setting'],
  ])('names %p as a problem', (fields, problem) => {
    expect(problemsOf(parseConfig(document(fields), {})).join('\n')).toContain(problem);
  });
});

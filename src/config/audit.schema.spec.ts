import { parseConfig } from './config.loader';

const lanes = { main: { concurrency: 1, queueCapacity: 1 } };

describe('the audit section of the config', () => {
  it('takes a switch and a key of 16 characters or more, or none', () => {
    expect(parseConfig({ lanes, audit: { toolCalls: true, argumentsKey: 'k'.repeat(16) } }, {}).ok).toBe(true);
    expect(parseConfig({ lanes, audit: { argumentsKey: '' } }, {}).ok).toBe(true);
    expect(parseConfig({ lanes, audit: { argumentsKey: 'short' } }, {})).toEqual({
      ok: false,
      problems: ['audit.argumentsKey: must be at least 16 characters, or empty for none'],
    });
    expect(
      parseConfig({ lanes, tools: { t: { lane: 'main', kind: 'builtin', builtin: 'echo', audit: 'yes' } } }, {}).ok,
    ).toBe(false);
  });
});

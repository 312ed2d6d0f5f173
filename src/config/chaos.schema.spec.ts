import { resolve } from 'node:path';
import { loadConfigFile, parseConfig } from './config.loader';
import { configOf, problemsOf } from '../../test/support/config-results';

/** A document with a tool `t` and an LLM route `chat` with one target, their chaos as given. */
function document(toolChaos?: unknown, targetChaos?: unknown, extra: Record<string, unknown> = {}) {
  return {
    lanes: { main: { concurrency: 1, queueCapacity: 1 } },
    tools: {
      t: { lane: 'main', kind: 'builtin', builtin: 'echo', ...(toolChaos === undefined ? {} : { chaos: toolChaos }) },
    },
    llm: {
      routes: {
        chat: {
          lane: 'main',
          targets: [{ provider: 'fake', model: 'f', ...(targetChaos === undefined ? {} : { chaos: targetChaos }) }],
        },
      },
    },
    ...extra,
  };
}

describe('config: chaos', () => {
  it('is off by default, and nothing has chaos settings', () => {
    const config = configOf(parseConfig(document(), {}));

    expect(config.chaos).toEqual({ enabled: false });
    expect(config.tools.t.chaos).toBeUndefined();
    expect(config.llm.routes.chat.targets[0].chaos).toBeUndefined();
  });

  it('reads a tool’s and a target’s settings as written, numbers from ${ENV} too', () => {
    const config = configOf(
      parseConfig(
        document(
          { faultRate: '${RATE}', faultKind: 'timeout', latencyMs: 250, latencyRate: 0.5 },
          { faultRate: 0.1, faultKind: 'rate_limited', retryAfterMs: 2_000 },
        ),
        { RATE: '0.25' },
      ),
    );

    expect(config.tools.t.chaos).toEqual({ faultRate: 0.25, faultKind: 'timeout', latencyMs: 250, latencyRate: 0.5 });
    expect(config.llm.routes.chat.targets[0].chaos).toEqual({
      faultRate: 0.1,
      faultKind: 'rate_limited',
      retryAfterMs: 2_000,
    });
  });

  it.each(['overloaded', 'rate_limited', 'server_error', 'timeout', 'stream_cut'])(
    'accepts the target fault kind %s',
    (faultKind) => {
      expect(parseConfig(document(undefined, { faultRate: 1, faultKind }), {}).ok).toBe(true);
    },
  );

  it('refuses a kind a tool cannot suffer, and one a target cannot', () => {
    expect(
      problemsOf(
        parseConfig(document({ faultRate: 1, faultKind: 'overloaded' }, { faultRate: 1, faultKind: 'transient' }), {}),
      ),
    ).toEqual([
      'tools.t.chaos.faultKind: must be one of transient, timeout',
      'llm.routes.chat.targets.0.chaos.faultKind: must be one of overloaded, rate_limited, server_error, timeout, stream_cut',
    ]);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a rate above 1', { faultRate: 1.5, faultKind: 'transient' }, 'faultRate: must be a number from 0 to 1'],
    ['a negative latency rate', { latencyRate: -0.5, latencyMs: 10 }, 'latencyRate: must be a number from 0 to 1'],
    ['a latency of 0', { latencyRate: 0.5, latencyMs: 0 }, 'latencyMs: must be an integer from 1 to 600000'],
    ['a fault rate without its kind', { faultRate: 0.5 }, 'faultKind: is required when faultRate is above 0'],
    [
      'a kind without its rate',
      { faultKind: 'transient' },
      'faultRate: is required with faultKind: the share of attempts that fail, from 0 to 1',
    ],
    [
      'a latency without its rate',
      { latencyMs: 100 },
      'latencyRate: is required with latencyMs: the share of attempts delayed, from 0 to 1',
    ],
    ['a latency rate without its latency', { latencyRate: 0.2 }, 'latencyMs: is required when latencyRate is above 0'],
    ['an unknown key', { faultRatio: 0.5 }, 'faultRatio: unknown key'],
  ])('refuses %s', (_label, chaos, problem) => {
    expect(problemsOf(parseConfig(document(chaos), {}))).toEqual([`tools.t.chaos.${problem}`]);
  });

  it('allows a rate of 0 alone: the setting is paused', () => {
    expect(parseConfig(document({ faultRate: 0 }, { latencyRate: 0 }), {}).ok).toBe(true);
  });

  it('gives a Retry-After to a rate_limited fault only', () => {
    expect(
      problemsOf(parseConfig(document(undefined, { faultRate: 1, faultKind: 'overloaded', retryAfterMs: 10 }), {})),
    ).toEqual(['llm.routes.chat.targets.0.chaos.retryAfterMs: only a rate_limited fault has a Retry-After']);
  });

  it('refuses an unknown key beside enabled', () => {
    expect(problemsOf(parseConfig(document(undefined, undefined, { chaos: { enable: true } }), {}))).toEqual([
      'chaos.enable: unknown key',
    ]);
  });

  it('is shown in config/full.example.yaml, switched off, with settings that stay inert', () => {
    const config = configOf(loadConfigFile(resolve(__dirname, '../../config/full.example.yaml'), {}));

    expect(config.chaos).toEqual({ enabled: false });
    expect(config.tools.render_preview.chaos).toMatchObject({ faultRate: 0.2, faultKind: 'transient' });
    expect(config.llm.routes.chat.targets[2].chaos).toMatchObject({ faultKind: 'rate_limited' });
  });
});

import { Logger } from '@nestjs/common';
import { EVERYONE, LazyAbortController, seededRandom } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { LlmTargetChaosConfig, LlmTargetConfig } from '../llm';
import type { WrappedTarget } from '../llm';
import { FakeProvider } from '../llm/providers/fake.provider';
import type { ChaosModuleOptions } from './chaos.module-definition';
import { ChaosProvider } from './chaos.provider';
import { ChaosRegistry } from './chaos-registry.service';

const target = (chaos: LlmTargetChaosConfig | undefined): WrappedTarget => ({
  route: 'chat',
  label: 'fake/f',
  lane: 'llm',
  config: { provider: 'fake', model: 'f', chaos } as LlmTargetConfig,
  audience: EVERYONE,
});

describe('ChaosRegistry', () => {
  let clock: FakeClock;
  let warnings: string[];

  beforeEach(() => {
    clock = new FakeClock();
    warnings = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => {
      warnings.push(String(message));
    });
  });

  afterEach(() => jest.restoreAllMocks());

  const registry = (options: ChaosModuleOptions) => new ChaosRegistry(options, clock, seededRandom(1));

  it('holds the chaos of the tools whose settings can inject something', () => {
    const chaos = registry({
      enabled: true,
      tools: { flaky: { faultRate: 0.5, faultKind: 'transient' }, paused: { faultRate: 0, faultKind: 'transient' } },
    });

    expect(chaos.touchesTools).toBe(true);
    expect(chaos.forTool('flaky')?.toolId).toBe('flaky');
    expect(chaos.forTool('paused')).toBeUndefined();
    expect(chaos.forTool('other')).toBeUndefined();
  });

  it('holds nothing and wraps nothing while not enabled, whatever the settings', () => {
    const chaos = registry({ tools: { flaky: { faultRate: 1, faultKind: 'transient' } } });
    const provider = new FakeProvider(undefined, clock);

    expect(chaos.enabled).toBe(false);
    expect(chaos.touchesTools).toBe(false);
    expect(chaos.forTool('flaky')).toBeUndefined();
    expect(chaos.wrap(provider, target({ faultRate: 1, faultKind: 'overloaded' }))).toBe(provider);
  });

  it('wraps a target’s provider only when its settings can inject something', () => {
    const chaos = registry({ enabled: true });
    const provider = new FakeProvider(undefined, clock);

    expect(chaos.wrap(provider, target(undefined))).toBe(provider);
    expect(chaos.wrap(provider, target({ latencyRate: 0, latencyMs: 10 }))).toBe(provider);
    expect(chaos.wrap(provider, target({ latencyRate: 0.1, latencyMs: 10 }))).toBeInstanceOf(ChaosProvider);
  });

  it('says at start-up, as a warning, what it injects into', () => {
    const chaos = registry({ enabled: true, tools: { flaky: { faultRate: 1, faultKind: 'timeout' } } });
    chaos.wrap(new FakeProvider(undefined, clock), target({ faultRate: 1, faultKind: 'server_error' }));

    chaos.onApplicationBootstrap();

    expect(warnings).toEqual([
      'chaos is enabled: faults and latency are injected on purpose into flaky, llm.chat/fake/f',
    ]);
  });

  it('warns that nothing is injected when enabled with no settings, and says nothing when not enabled', () => {
    registry({ enabled: true }).onApplicationBootstrap();
    registry({ enabled: false }).onApplicationBootstrap();

    expect(warnings).toEqual(['chaos is enabled, but no tool or LLM target has chaos settings: nothing is injected']);
  });

  it('tells every listener what was injected until it is disposed', async () => {
    const chaos = registry({ enabled: true, tools: { flaky: { faultRate: 1, faultKind: 'transient' } } });
    const heard: string[] = [];
    const dispose = chaos.onInjected(({ target, kind, callId }) => heard.push(`${target} ${kind} ${callId}`));
    const attempt = { callId: 'c-1', lane: 'main', abort: new LazyAbortController() };

    await Promise.resolve(chaos.forTool('flaky')!.attempt(() => 'ran', attempt)).catch(() => undefined);
    dispose();
    await Promise.resolve(chaos.forTool('flaky')!.attempt(() => 'ran', attempt)).catch(() => undefined);

    expect(heard).toEqual(['flaky transient c-1']);
  });
});

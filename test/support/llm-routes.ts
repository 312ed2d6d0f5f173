import { Breaker, type BreakerSettings } from '../../src/circuit-breaker';
import { FakeClock } from '../../src/common/fake-clock';
import type { FakeStepConfig } from '../../src/llm';
import type { PoolName } from '../../src/containment/containment-decision';
import { EgressPolicy } from '../../src/containment/egress';
import { HttpPool } from '../../src/containment/http-pool';
import { RetryPolicy } from '../../src/retry';
import type { ChatChunk, ChatCompletion } from '../../src/llm/chat.types';
import type { Price } from '../../src/llm/pricing';
import { FakeProvider } from '../../src/llm/providers/fake.provider';
import type { LlmProvider, ProviderAttempt } from '../../src/llm/providers/llm-provider';
import { HedgeAllowance, TargetHealth } from '../../src/llm/routing/hedging';
import type { LlmRoute, LlmTarget } from '../../src/llm/routing/llm-route';
import { contextWindowBounds, priorityGroups } from '../../src/llm/routing/llm-routes.service';
import { TargetLoad } from '../../src/llm/routing/target-load';
import { installFakeTimers } from './fake-timers';
import type { TargetStrategy } from '../../src/llm/routing/target-strategy';

/** A breaker that never opens unless a test says so. */
export const CALM: BreakerSettings = {
  errorThresholdPercentage: 50,
  volumeThreshold: 1_000,
  resetTimeoutMs: 30_000,
  rollingCountTimeoutMs: 10_000,
};

/** What one provider call was given, and when. */
export interface ProviderCall {
  at: number;
  model: string;
  timeoutMs: number;
  maxOutputTokens: number;
  signal: AbortSignal;
}

/** A provider that notes every call (completion or stream) before handing it on. */
export class RecordingProvider implements LlmProvider {
  readonly name = 'fake';
  readonly calls: ProviderCall[] = [];

  constructor(
    private readonly inner: LlmProvider,
    /** The test's clock now; a getter, as each test makes its own. */
    private readonly clockOf: () => FakeClock,
  ) {}

  complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    this.note(attempt);
    return this.inner.complete(attempt);
  }

  stream(attempt: ProviderAttempt): AsyncIterable<ChatChunk> {
    this.note(attempt);
    return this.inner.stream(attempt);
  }

  private note({ request, timeoutMs, maxOutputTokens, signal }: ProviderAttempt): void {
    this.calls.push({ at: this.clockOf().now(), model: request.model, timeoutMs, maxOutputTokens, signal });
  }
}

export type TestTarget = LlmTarget & { provider: RecordingProvider };

/** A fake target on `clock`: its breaker goes into `breakers`, for the test to shut down. */
export function testTarget(
  clock: FakeClock,
  breakers: Breaker[],
  model: string,
  script: FakeStepConfig[],
  options: {
    price?: Price | undefined;
    timeoutMs?: number;
    breaker?: Partial<BreakerSettings>;
    provider?: LlmProvider;
    priority?: number;
    weight?: number;
    contextWindow?: number;
  } = {},
): TestTarget {
  const breaker = new Breaker(`llm.test.${model}`, { ...CALM, ...options.breaker }, clock);
  breakers.push(breaker);
  return {
    label: `fake/${model}`,
    target: { provider: 'fake', model },
    provider: new RecordingProvider(options.provider ?? new FakeProvider(script, clock), () => clock),
    breaker,
    price: options.price,
    timeoutMs: options.timeoutMs ?? 30_000,
    config: { provider: 'fake', model, script },
    health: new TargetHealth(),
    priority: options.priority ?? 0,
    weight: options.weight ?? 1,
    contextWindow: options.contextWindow,
    load: new TargetLoad(),
  };
}

export interface TestRouteOptions {
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  deadlineMs?: number;
  hedgeAfterMs?: number;
  maxHedges?: number;
  firstByteTimeoutMs?: number;
  idleTimeoutMs?: number;
  strategy?: TargetStrategy;
}

/** A route `chat` in lane `llm` over `targets`, no cache, with `maxOutputTokens` as its cap. */
export function testRoute(targets: LlmTarget[], maxOutputTokens: number, options: TestRouteOptions = {}): LlmRoute {
  const { maxAttempts = 2, baseDelayMs = 100, maxDelayMs = 1_000, deadlineMs = 60_000 } = options;
  const { hedgeAfterMs = 0, maxHedges = 1, firstByteTimeoutMs = 30_000, idleTimeoutMs = 30_000 } = options;
  const ordered = priorityGroups(targets);
  return {
    name: 'chat',
    lane: 'llm',
    targets: ordered.targets,
    groups: ordered.groups,
    strategy: options.strategy ?? 'ordered',
    priorityClass: 'standard',
    ...contextWindowBounds(targets),
    retry: new RetryPolicy({ maxAttempts, baseDelayMs, maxDelayMs, deadlineMs }),
    deadlineMs,
    maxOutputTokens,
    hedgeAfterMs,
    maxHedges,
    hedges: new HedgeAllowance(),
    firstByteTimeoutMs,
    idleTimeoutMs,
    cache: false,
    semanticCache: false,
    cacheScope: 'chat',
  };
}

/**
 * Routes in virtual time for one spec file: each test gets a FakeClock (`clock`) with jest's fake
 * timers installed on it, and a fresh `breakers` list whose every breaker (testTarget puts them
 * there) is shut down after it. Call it before the file's own hooks: they then see this test's.
 */
export function routingInVirtualTime() {
  const fixture = { clock: new FakeClock(), breakers: [] as Breaker[] };
  beforeEach(() => {
    fixture.clock = new FakeClock();
    installFakeTimers(fixture.clock);
    fixture.breakers = [];
  });
  afterEach(() => {
    for (const breaker of fixture.breakers) breaker.shutdown();
    jest.useRealTimers();
  });
  return fixture;
}

/**
 * The normal pool a spec file's attempts are given (its fake providers send nothing through it),
 * closed after the file.
 */
export function specPool(maxConcurrency: number): HttpPool {
  const pool = new HttpPool(
    { name: 'normal' as PoolName, maxConcurrency, timeoutMs: 10_000, pooledConnectionLifetimeMs: 60_000 },
    new EgressPolicy({ allowHosts: [], allowPrivateCidrs: [] }),
    new FakeClock(),
  );
  afterAll(() => pool.close());
  return pool;
}

import fc from 'fast-check';
import { LazyAbortController, ResilienceError, seededRandom } from '../common';
import { FakeClock, settle } from '../common/fake-clock';
import { deferred, type Deferred } from '../../test/support/deferred';
import { type AdaptiveLimitSettings, createAdaptiveLimit } from './adaptive';
import { Lane } from './lane';

const NUM_RUNS = 500;
const MAX_STEPS = 80;

interface Shape {
  settings: AdaptiveLimitSettings;
  concurrency: number;
  queueCapacity: number;
  seed: number;
}

type Step =
  | { kind: 'submit'; tenant: 'a' | 'b' | 'c' }
  | { kind: 'succeed' | 'timeout' | 'fail' | 'leave'; pick: number }
  | { kind: 'advance'; ms: number };

const shapeArb: fc.Arbitrary<Shape> = fc
  .record({
    algorithm: fc.constantFrom('gradient2', 'vegas', 'aimd'),
    min: fc.integer({ min: 1, max: 4 }),
    span: fc.integer({ min: 0, max: 8 }),
    start: fc.nat(),
    queueCapacity: fc.integer({ min: 0, max: 12 }),
    seed: fc.nat(),
  })
  .map(({ algorithm, min, span, start, queueCapacity, seed }) => {
    const max = min + span;
    const settings = (
      algorithm === 'gradient2'
        ? { algorithm, min, max, smoothing: 1 }
        : algorithm === 'vegas'
          ? { algorithm, min, max, probeMultiplier: 3 }
          : { algorithm, min, max, latencyThresholdMs: 150 }
    ) as AdaptiveLimitSettings;
    return { settings, concurrency: min + (start % (span + 1)), queueCapacity, seed };
  });

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record({ kind: fc.constant('submit' as const), tenant: fc.constantFrom('a', 'b', 'c') }),
  },
  {
    weight: 40,
    arbitrary: fc.record({ kind: fc.constantFrom('succeed', 'timeout', 'fail', 'leave'), pick: fc.nat() }),
  },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 400 }) }) },
);

interface Running {
  gate: Deferred<string>;
  abort: LazyAbortController;
}

class PropertyViolation extends Error {}
function check(condition: boolean, message: () => string): void {
  if (!condition) throw new PropertyViolation(message());
}

/**
 * One interleaving of calls on an adaptive lane: whatever the samples do to its limit, the
 * limit stays within [min, max], no call starts past it, no call waits past the queue's bound
 * of that moment, and every call is answered once.
 */
async function interleave(shape: Shape, steps: Step[]): Promise<void> {
  const clock = new FakeClock();
  const { settings, concurrency, queueCapacity } = shape;
  const adaptive = createAdaptiveLimit('property', settings, concurrency, seededRandom(shape.seed));
  const lane = new Lane({ name: 'property', clock, concurrency, queueCapacity, queueTtlMs: 1_000, adaptive });
  const running: Running[] = [];
  let answered = 0;
  let submitted = 0;
  const within = () => {
    const limit = lane.currentLimit;
    check(
      limit >= settings.min && limit <= settings.max,
      () => `limit ${limit} outside [${settings.min}, ${settings.max}]`,
    );
    check(Number.isInteger(limit), () => `limit ${limit} is not an integer`);
    check(lane.snapshot().limit === limit, () => 'the snapshot shows another limit');
  };

  for (const step of steps) {
    if (step.kind === 'submit') {
      const before = lane.snapshot();
      const limitBefore = lane.currentLimit;
      const queueLimitBefore = lane.currentQueueLimit;
      const gate = deferred<string>();
      const abort = new LazyAbortController();
      const task = () => {
        // At its start: no more run than the limit allows.
        check(
          lane.snapshot().active <= lane.currentLimit,
          () => `started past the limit: ${JSON.stringify(lane.snapshot())}`,
        );
        running.push({ gate, abort });
        return gate.promise;
      };
      submitted++;
      const result = lane.run(task, { tenant: step.tenant, abort });
      if (typeof result === 'string') {
        answered++;
        check(
          result === 'queue_full' ? before.active >= limitBefore && before.waiting >= queueLimitBefore : true,
          () => `'${result}' with ${JSON.stringify(before)}, limit ${limitBefore}, queue limit ${queueLimitBefore}`,
        );
      } else {
        const after = lane.snapshot();
        if (after.waiting > before.waiting) {
          check(
            before.active >= limitBefore && before.waiting < queueLimitBefore,
            () => `queued with ${JSON.stringify(before)}, limit ${limitBefore}, queue limit ${queueLimitBefore}`,
          );
        }
        result.then(
          () => answered++,
          () => answered++,
        );
      }
    } else if (step.kind === 'advance') {
      clock.advance(step.ms);
    } else if (running.length > 0) {
      const [call] = running.splice(step.pick % running.length, 1);
      if (step.kind === 'succeed') call!.gate.resolve('ok');
      else if (step.kind === 'timeout') call!.gate.reject(new ResilienceError('timeout', 'timed out'));
      else if (step.kind === 'fail') call!.gate.reject(new ResilienceError('transient', 'upstream 503'));
      else {
        call!.abort.abort(new Error('caller left'));
        call!.gate.reject(new Error('caller left'));
      }
    }
    await settle();
    within();
  }
  // Everything ends: running calls succeed, waiting ones start and succeed or expire.
  for (let round = 0; round < 1_000 && (running.length > 0 || lane.snapshot().waiting > 0); round++) {
    for (const call of running.splice(0)) call.gate.resolve('ok');
    await settle();
    clock.advance(100);
    await settle();
    within();
  }
  await settle();
  check(answered === submitted, () => `${submitted} calls, ${answered} answered`);
  check(lane.snapshot().active === 0 && lane.snapshot().waiting === 0, () => 'the lane is not idle at the end');
}

describe('an adaptive lane, property', () => {
  it(`keeps its limit within [min, max] and admits no call past it (${NUM_RUNS} interleavings)`, async () => {
    await fc.assert(
      fc.asyncProperty(shapeArb, fc.array(stepArb, { minLength: 20, maxLength: MAX_STEPS, size: 'max' }), interleave),
      {
        numRuns: NUM_RUNS,
      },
    );
    // 0.3 s alone; the suite's other workers can slow its thousands of event-loop turns many times.
  }, 60_000);
});

/**
 * The scale benchmark's in-process part, in a process of its own (`--expose-gc`; bench/scale.ts
 * runs it with runForResult): what admission costs a call as tenants and lanes grow.
 *
 * Tenants: for each count N, the steps of a call that know its tenant, built from dist/ on the
 * memory stores (bench/scale/mechanisms.ts), with every tenant's key, rate limit and budget in
 * the config. Call n comes from tenant n mod N, so with N = 100,000 each tenant's state is
 * touched once every 100,000 calls (cold in every cache), with N = 1 on every call. Calls
 * arrive in bursts of 100 over a lane of 8, so 92 of each burst wait in its fair queue, one
 * tenant queue each when N >= 100. Candidates: every step together for each N; each step alone
 * for the fewest and the most tenants. Before the rounds, one call of every tenant (state made).
 *
 * Lanes: L lanes in the service's LaneRegistry, call n admitted by lane n mod L (looked up by
 * name) and released, one at a time (uncontended), for each L.
 *
 * Figures: ns per call of each candidate per round (tinybench, 1,000 calls an iteration, the
 * candidates' order rotating each round); and the heap the most tenants hold (after a forced
 * GC): per configured tenant once the mechanisms are built (its key, limits, budget and seeded
 * containment snapshot), and per tenant more once each has made one call.
 */
import { built } from '../support/built';
import { forceGc, usedHeap } from '../support/heap';
import { microBench } from '../support/micro-bench';
import { exitWithParent, sendResult } from '../support/processes';
import { inBursts, type Step, STEPS, tenantSet } from './mechanisms';
import { makeTenants } from './tenants';

const { LaneRegistry } = built<typeof import('../../src/bulkhead')>('bulkhead');
const { SystemClock } = built<typeof import('../../src/common')>('common');

/** Node options of the process this runs in. */
export const ADMISSION_NODE_ARGS = ['--expose-gc'];
export const CALLS_PER_ITERATION = 1_000;
/** The warm-up makes at least this many calls, and at least one per tenant. */
const MIN_WARM_UP_CALLS = 20_000;
const DONE = Promise.resolve(1);

export interface AdmissionSettings {
  tenantCounts: number[];
  laneCounts: number[];
  rounds: number;
  timeMs: number;
}

export type CandidateGroup = 'tenants' | 'step' | 'lanes';

export interface CandidateFigures {
  name: string;
  group: CandidateGroup;
  /** Tenants, or lanes for the group `lanes`. */
  count: number;
  step?: string;
  /** One per round. */
  nsPerCall: number[];
}

export interface AdmissionFigures {
  settings: AdmissionSettings;
  candidates: CandidateFigures[];
  memory: {
    tenants: number;
    /** Heap held per configured tenant by the built mechanisms (after a forced GC), bytes. */
    configuredBytesPerTenant: number;
    /** Heap held per tenant more after one call of each (after a forced GC), bytes. */
    activeBytesPerTenant: number;
    /** The warm-up pass that made every tenant's state, ns per call (its first call). */
    firstCallNs: number;
  };
}

interface Candidate {
  figures: CandidateFigures;
  /** Runs the next `calls` calls. */
  run(calls: number): Promise<void>;
}

/** A candidate whose calls are numbered on from where its last iteration stopped. */
function candidate(figures: Omit<CandidateFigures, 'nsPerCall'>, step: Step, bursts: boolean): Candidate {
  let next = 0;
  return {
    figures: { ...figures, nsPerCall: [] },
    run: async (calls) => {
      const from = next;
      next += calls;
      if (bursts) return inBursts(step, from, calls);
      for (let n = from; n < from + calls; n++) await step(n);
    },
  };
}

/** L lanes in the service's registry; call n is admitted by lane n mod L and released. */
function lanesStep(count: number): Step {
  const clock = new SystemClock();
  const settings: Record<string, { concurrency: number; queueCapacity: number }> = {};
  const names: string[] = [];
  for (let n = 0; n < count; n++) {
    names.push(`lane-${n}`);
    settings[names[n]!] = { concurrency: 8, queueCapacity: 100 };
  }
  const registry = new LaneRegistry({ lanes: settings }, clock);
  return (n) => {
    const running = registry.get(names[n % count]!)!.run(() => DONE, { tenant: 't0' });
    if (typeof running === 'string') throw new Error(`lane refused a call: ${running}`);
    return running;
  };
}

async function measure(settings: AdmissionSettings): Promise<AdmissionFigures> {
  const counts = [...settings.tenantCounts].sort((a, b) => b - a);
  const most = counts[0]!;
  const fewest = counts.at(-1)!;

  // The most tenants first, alone in the heap: what their state holds.
  const tenantsOfMost = makeTenants(most);
  forceGc();
  const empty = usedHeap();
  const sets = new Map([[most, await tenantSet(tenantsOfMost)]]);
  forceGc();
  const configured = usedHeap();
  const warmUpCalls = Math.max(most, MIN_WARM_UP_CALLS);
  const warmUpStart = performance.now();
  await inBursts(sets.get(most)!.call, 0, warmUpCalls);
  const firstCallNs = ((performance.now() - warmUpStart) * 1e6) / warmUpCalls;
  forceGc();
  const active = usedHeap();
  for (const count of counts.slice(1)) {
    const set = await tenantSet(makeTenants(count));
    await inBursts(set.call, 0, Math.max(count, MIN_WARM_UP_CALLS));
    sets.set(count, set);
  }

  const candidates: Candidate[] = [];
  for (const count of settings.tenantCounts) {
    candidates.push(
      candidate({ name: `every step, ${count} tenants`, group: 'tenants', count }, sets.get(count)!.call, true),
    );
  }
  for (const step of STEPS) {
    for (const count of new Set([fewest, most])) {
      const figures = { name: `${step}, ${count} tenants`, group: 'step' as const, count, step };
      candidates.push(candidate(figures, sets.get(count)!.steps[step], true));
    }
  }
  for (const count of settings.laneCounts) {
    candidates.push(
      candidate({ name: `lane admission, ${count} lanes`, group: 'lanes', count }, lanesStep(count), false),
    );
  }

  for (let round = 0; round < settings.rounds; round++) {
    // Rotating the order spreads drift (a neighbour's load, GC debt) over everyone.
    const order = candidates.map((_, i) => candidates[(i + round) % candidates.length]!);
    const bench = microBench(settings.timeMs);
    for (const { figures, run } of order) {
      // Declared async: tinybench would otherwise call the function once more to find out.
      bench.add(figures.name, () => run(CALLS_PER_ITERATION), { async: true });
    }
    await bench.run();
    for (const task of bench.tasks) {
      const result = task.result;
      if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
      const figures = candidates.find((c) => c.figures.name === task.name)!.figures;
      figures.nsPerCall.push((result.period * 1e6) / CALLS_PER_ITERATION);
    }
    process.stdout.write(`  in-process round ${round + 1}/${settings.rounds} done\n`);
  }

  return {
    settings,
    candidates: candidates.map((c) => c.figures),
    memory: {
      tenants: most,
      configuredBytesPerTenant: (configured - empty) / most,
      activeBytesPerTenant: (active - configured) / most,
      firstCallNs,
    },
  };
}

/** `--name 1,2,3` from the command line. */
function list(name: string): number[] {
  const index = process.argv.indexOf(`--${name}`);
  const values = (process.argv[index + 1] ?? '').split(',').map(Number);
  if (index === -1 || values.some((value) => !Number.isInteger(value) || value < 1)) {
    throw new Error(`--${name} must be a list of positive integers`);
  }
  return values;
}

if (require.main === module) {
  exitWithParent();
  const settings: AdmissionSettings = {
    tenantCounts: list('tenants'),
    laneCounts: list('lanes'),
    rounds: list('rounds')[0]!,
    timeMs: list('time')[0]!,
  };
  measure(settings).then(
    (figures) => {
      sendResult(figures);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`admission child failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}

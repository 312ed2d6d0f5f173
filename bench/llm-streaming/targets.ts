/**
 * Issue 39's targets for the route's streams, set against the floor (the least proxy in Node,
 * ./floor-proxy.ts) rather than the model server read directly, which a proxy sharing its cores
 * can never reach: streams per second at 16 immediate streams at a time, and the time to the first
 * token once the model takes its time (the delayed variant, at each concurrency). A target is met
 * when the median of the per-round figures meets it; the spread is printed beside it.
 */
import { printTable, range } from '../support/report';
import type { Variant } from './setup';
import type { ScenarioSummary } from './summary';

/** The route's streams per second over the floor's, at least, immediate, 16 at a time. */
export const STREAMS_PER_S_OF_FLOOR_TARGET = 0.8;
/** The route's TTFT p50 over the floor's, at most, in ms, delayed. */
export const TTFT_OVER_FLOOR_TARGET_MS = 0.2;

export interface TargetCheck {
  figure: string;
  scenario: string;
  /** Per round: median (min-max). */
  value: { median: number; min: number; max: number };
  target: string;
  met: boolean;
}

export function checkTargets(summaries: readonly ScenarioSummary[]): TargetCheck[] {
  const of = (variant: Variant, concurrency?: number) =>
    summaries.filter((s) => s.variant === variant && (concurrency === undefined || s.concurrency === concurrency));
  return [
    ...of('immediate', 16).map((s) => ({
      figure: 'streams/s service / floor',
      scenario: s.scenario,
      value: s.serviceToFloorStreamsPerSRatio,
      target: `>= ${STREAMS_PER_S_OF_FLOOR_TARGET}`,
      met: s.serviceToFloorStreamsPerSRatio.median >= STREAMS_PER_S_OF_FLOOR_TARGET,
    })),
    ...of('delayed').map((s) => ({
      figure: 'TTFT p50 ms service - floor',
      scenario: s.scenario,
      value: s.serviceOverFloorTtftP50Ms,
      target: `<= +${TTFT_OVER_FLOOR_TARGET_MS}`,
      met: s.serviceOverFloorTtftP50Ms.median <= TTFT_OVER_FLOOR_TARGET_MS,
    })),
  ];
}

export function printTargets(targets: readonly TargetCheck[]): void {
  printTable(
    "issue 39's targets against the floor (median of the rounds decides)",
    targets.map((t) => ({
      figure: t.figure,
      scenario: t.scenario,
      'per round': range(t.value, t.figure.startsWith('streams') ? 3 : 2),
      target: t.target,
      'met?': t.met ? 'yes' : 'no',
    })),
  );
}

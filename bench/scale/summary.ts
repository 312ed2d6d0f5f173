/** The scale benchmark's figures summarised: each side against the side with the least work, round by round. */
import { summary } from '../support/stats';
import type { AdmissionFigures, CandidateFigures } from './admission';
import { type CallRun, compareCalls, summariseCalls } from './calls';

/** Each side's runs summarised, and its CPU per call and req/s as a ratio to the first side's, per round. */
export function summariseCallSides(sideNames: readonly string[], runs: readonly CallRun[]) {
  const of = (name: string) => runs.filter((run) => run.side === name);
  const baseline = of(sideNames[0]!);
  return sideNames.map((name) => ({
    side: name,
    ...summariseCalls(of(name)),
    vsFirst: compareCalls(baseline, of(name)),
  }));
}

export type SideSummary = ReturnType<typeof summariseCallSides>[number];

/** Ratio of ns per call, round by round, of `candidate` to `baseline` (median, min-max). */
function perRound(baseline: CandidateFigures, candidate: CandidateFigures) {
  return summary(candidate.nsPerCall.map((ns, round) => ns / baseline.nsPerCall[round]!));
}

/**
 * The in-process candidates: ns per call (median, min-max over the rounds) and the ratio to the
 * same kind of candidate with the fewest tenants (or lanes), per round.
 */
export function summariseAdmission(figures: AdmissionFigures) {
  const fewest = (candidate: CandidateFigures) =>
    figures.candidates
      .filter((other) => other.group === candidate.group && other.step === candidate.step)
      .reduce((least, other) => (other.count < least.count ? other : least));
  return figures.candidates.map((candidate) => ({
    name: candidate.name,
    group: candidate.group,
    count: candidate.count,
    step: candidate.step,
    ns: summary(candidate.nsPerCall),
    vsFewest: perRound(fewest(candidate), candidate),
  }));
}

export type AdmissionSummary = ReturnType<typeof summariseAdmission>;

/** The LLM proxy benchmark's sides, its runs, and how two sides compare. */
import { compareRuns, type RoundRun } from '../support/rounds';
import { median } from '../support/stats';
import type { CheckedLoadResult } from './checked-load';

/**
 * direct: the upstream itself; service: the LLM route, cache off; messages and responses: the
 * same route through Anthropic's Messages and OpenAI's Responses ingresses; cached: the LLM
 * route answering from its exact cache; tool: the service's http tool forwarding the same
 * request; portkey: Portkey's gateway; embed-direct: the upstream's embeddings endpoint itself;
 * embeddings: the service's `/v1/embeddings` route to it.
 */
/** `floor` is timed by the sequential method only (bench/llm-proxy/floor-proxy.ts). */
export type Side =
  | 'direct'
  | 'floor'
  | 'service'
  | 'messages'
  | 'responses'
  | 'cached'
  | 'tool'
  | 'portkey'
  | 'embed-direct'
  | 'embeddings';
export const SIDES: readonly Side[] = [
  'direct',
  'service',
  'messages',
  'responses',
  'cached',
  'tool',
  'portkey',
  'embed-direct',
  'embeddings',
];

/** The side whose answer a side proxies: what its added latency is measured over. */
export function baselineOf(side: Side): Side {
  return side === 'embeddings' ? 'embed-direct' : 'direct';
}

/** The upstream itself, one endpoint or the other: the sides others are measured over. */
export function isBaseline(side: Side): boolean {
  return side === 'direct' || side === 'embed-direct';
}

/** The ratios the tables show, x / y. */
export const COMPARED: ReadonlyArray<readonly [Side, Side]> = [
  ['service', 'direct'],
  ['messages', 'service'],
  ['responses', 'service'],
  ['service', 'portkey'],
  ['portkey', 'direct'],
  ['cached', 'direct'],
  ['cached', 'service'],
  ['service', 'tool'],
  ['tool', 'direct'],
  ['embeddings', 'embed-direct'],
  ['embeddings', 'service'],
];

/**
 * A side's run in a round; `upstreamRequests` counts the requests of this side the upstream
 * answered during the run (by their `user`).
 */
export interface Run extends RoundRun<CheckedLoadResult> {
  side: Side;
  /** Of those, the ones it refused (400): a request not as a provider would get it. */
  upstreamRejected: number;
}

/** x / y per round (the runs of the same round) and of the medians, and their servers' CPU. */
export function compare(x: Side, xs: Run[], y: Side, ys: Run[]) {
  const cpu = (side: Side) => {
    const server = isBaseline(side) ? 'upstream' : side === 'portkey' ? 'portkey' : 'service';
    return (run: Run) => (run.cpuCores[server] * 1e6) / run.reqPerS;
  };
  return {
    ...compareRuns(x, xs, y, ys),
    /** The CPU per call of x's server over y's (the upstream's for direct), of the medians. */
    serverCpu: median(xs.map(cpu(x))) / median(ys.map(cpu(y))),
  };
}

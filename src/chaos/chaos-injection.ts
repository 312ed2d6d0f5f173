import type { Audience } from '../common';

/** One fault or delay chaos put into one attempt, as it is put in. */
export interface ChaosInjection {
  /** The tool id, or `llm.<route>/<provider>/<model>` for an LLM target. */
  readonly target: string;
  /** The fault kind, or `latency`. */
  readonly kind: string;
  /** The call whose attempt it was, when the attempt knows it (tool calls). */
  readonly callId?: string;
  /** The lane the attempt runs in. */
  readonly lane: string;
  /** Who may see it, when not everyone (an LLM route kept for some tenants). */
  readonly audience?: Audience;
}

/** Where a mechanism reports what it injected (metrics and the ledger listen). */
export type ChaosReport = (injection: ChaosInjection) => void;

/** The `kind` of a delay, beside the fault kinds. */
export const LATENCY = 'latency';

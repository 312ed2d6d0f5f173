import type { Awaitable, LazyAbortController } from '../common';
import type { StoredOutcome } from './idempotency.store';

/**
 * One call with an `Idempotency-Key`, as {@link IdempotencyService.runOnce} runs it: what it
 * asks, and what it does at each turn. One object per keyed call (a tool call's, an LLM
 * request's) instead of a closure per turn.
 */
export interface KeyedRun<T> {
  /** The key scoped to its tenant and tool (`scopedIdempotencyKey`). */
  readonly key: string;
  readonly tenant: string;
  /** What the call asks (JSON): the same key with anything else is `idempotency_conflict`. */
  readonly fingerprinted: unknown;
  /** How long the claim holds unrenewed should this process die (`leaseLifetimeMs`). */
  readonly leaseMs: number;
  /** The caller's abort: it ends a wait for another call's outcome, never the run itself. */
  readonly abort: LazyAbortController;
  /** The pool the run serves on, kept with its outcome. */
  readonly pool: 'normal' | 'isolated';
  /** Attempts made so far: read once the run ended, for its outcome. */
  readonly attempts: number;
  /** Whether the run started (a call refused before it ran stores nothing; a retry may run it). */
  readonly started: boolean;
  /**
   * Before the first wait on another replica's run of the key: such a wait may outlast what the
   * call holds for its own run (money), so it gives that back here...
   */
  beforeWaiting?(): Awaitable<void>;
  /**
   * ...and holds it again here when it leads after all. Throwing refuses the call before it ran:
   * the key stays free.
   */
  leadAfterWaiting?(): Awaitable<void>;
  /** Another call's outcome answers this one: called before waiting for it. */
  follows?(): Awaitable<void>;
  /** The answer from another call's outcome (joined, or replayed), or its failure thrown. */
  replay(outcome: StoredOutcome): T;
  /** Runs the call, detached from its caller: only `abort` (shutdown) stops it. */
  run(abort: LazyAbortController): Promise<T>;
}

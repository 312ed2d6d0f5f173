import { Inject, Injectable } from '@nestjs/common';
import { CLOCK, type Clock, markReported } from '../common';
import { callStatus } from './call-status';
import { EventLedger } from './event-ledger';

/** How a call arrived: the REST routes (and a company's own), or `/mcp`. */
export type CallTransport = 'http' | 'mcp';

/**
 * What a call of an audited tool adds to its outcome, for its audit line alone (the call log's):
 * never the arguments, only their digest.
 */
export interface CallAudit {
  /** The tool's kind (`http`, `mcp`, `builtin`, `code`...). */
  readonly toolKind: string;
  /** The origin of the server the tool calls (`https://host:port`), for the kinds that call one. */
  readonly upstream: string | undefined;
  /** HMAC-SHA256 (or SHA-256 without a key) of the arguments' canonical JSON, hex. */
  readonly argumentsDigest: string;
}

/** How one call through a lane ended: a tool call or a `@Bulkhead` route. */
export interface CallOutcome {
  callId: string;
  /** The tool, or `Controller.method` for a company route. */
  toolId: string;
  lane: string;
  tenant: string;
  /** The HTTP pool the call's outbound requests used; absent where none was decided. */
  pool?: 'normal' | 'isolated';
  /** How the call arrived; absent means `http`. */
  transport?: CallTransport;
  /** See `callStatus`: `ok`, an error kind, `cancelled`, `finished_after_caller_cancel`. */
  status: string;
  durationMs: number;
  attempts: number;
  /** The outcome is another call's, joined or replayed by idempotency key. */
  replayed: boolean;
  /** What chaos injected into its attempts, in order (a fault kind or `latency`); absent when nothing. */
  chaos?: readonly string[];
  /** An LLM request's target that served it (or was tried last), and why its route chose it. */
  target?: string;
  choice?: string;
  /** Only on a call of an audited tool. */
  audit?: CallAudit;
}

/** A finished call as its caller saw it; {@link CallOutcomes.finish} turns it into an outcome. */
export interface FinishedCall {
  callId: string;
  toolId: string;
  lane: string;
  tenant: string;
  /** The HTTP pool its containment snapshot gave it. */
  pool?: 'normal' | 'isolated';
  /** How the call arrived. @default 'http' */
  transport?: CallTransport;
  /** The call's cancellation: whether (and why) it was aborted. */
  abort: { readonly aborted: boolean; readonly reason: unknown };
  /** `clock.now()` when the call arrived. */
  startedAt: number;
  /** Whether its handler started (it took a lane slot). */
  started: boolean;
  /** Attempts the call made (for a replay: the attempts of the call replayed). */
  attempts: number;
  /** The outcome is another call's, joined or replayed by idempotency key. @default false */
  replayed?: boolean;
  /** The error the caller got (a ResilienceError); undefined on success. */
  error?: unknown;
  /** An LLM request's target that served it (or was tried last), and why its route chose it. */
  target?: string;
  choice?: string;
  /** Only on a call of an audited tool. */
  audit?: CallAudit;
}

/**
 * Calls whose chaos marks are kept at most until they finish. A call always finishes, so the
 * bound only matters should one never do: its marks are then dropped, oldest first.
 */
const MAX_MARKED_CALLS = 10_000;

/**
 * Where every finished call is reported once: it goes into the event ledger, and to
 * listeners such as the metrics collector (so the call path never imports prom-client).
 * Retries are reported here too, as they start.
 */
@Injectable()
export class CallOutcomes {
  private listeners: Array<(outcome: CallOutcome) => void> = [];
  private retryListeners: Array<(toolId: string) => void> = [];
  /** Kinds chaos injected into the attempts of calls still running, by call id. */
  private readonly chaosMarks = new Map<string, string[]>();

  constructor(
    private readonly ledger: EventLedger,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Records how a call ended; returns its duration in milliseconds, to 0.1 ms. */
  finish(call: FinishedCall): number {
    const durationMs = Math.round((this.clock.now() - call.startedAt) * 10) / 10;
    // The envelope filter then knows this failure has its ledger line and log line already.
    if (call.error !== undefined) markReported(call.error);
    this.record({
      callId: call.callId,
      toolId: call.toolId,
      lane: call.lane,
      tenant: call.tenant,
      pool: call.pool,
      transport: call.transport,
      status: callStatus(call),
      durationMs,
      attempts: call.attempts,
      replayed: call.replayed ?? false,
      // One size check per call while nothing was ever injected.
      chaos: this.chaosMarks.size === 0 ? undefined : this.takeChaosMarks(call.callId),
      target: call.target,
      choice: call.choice,
      audit: call.audit,
    });
    return durationMs;
  }

  record(outcome: CallOutcome): void {
    this.ledger.record(outcome.callId, outcome.toolId, outcome.lane, outcome.tenant, outcome.status, outcome.chaos);
    for (const listener of this.listeners) listener(outcome);
  }

  /**
   * Notes that chaos injected `kind` (a fault kind or `latency`) into an attempt of the running
   * call `callId`: its ledger line says so when it finishes.
   */
  markChaos(callId: string, kind: string): void {
    const kinds = this.chaosMarks.get(callId);
    if (kinds) {
      kinds.push(kind);
      return;
    }
    if (this.chaosMarks.size >= MAX_MARKED_CALLS) this.chaosMarks.delete(this.chaosMarks.keys().next().value!);
    this.chaosMarks.set(callId, [kind]);
  }

  private takeChaosMarks(callId: string): readonly string[] | undefined {
    const kinds = this.chaosMarks.get(callId);
    if (kinds) this.chaosMarks.delete(callId);
    return kinds;
  }

  /** Reports that a call of `toolId` starts a retry. */
  retry(toolId: string): void {
    for (const listener of this.retryListeners) listener(toolId);
  }

  onRetry(listener: (toolId: string) => void): () => void {
    this.retryListeners.push(listener);
    return () => {
      this.retryListeners = this.retryListeners.filter((item) => item !== listener);
    };
  }

  onOutcome(listener: (outcome: CallOutcome) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((item) => item !== listener);
    };
  }
}

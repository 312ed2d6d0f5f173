import {
  logRecord,
  callLogLevel,
  type CallLogLevel,
  type CallLogLine,
  callLogMessage,
  CallLogRecord,
  outcomeStatusCode,
} from '../common';
import type { CallAudit, CallOutcome } from '../events';

/** Where call lines go: a Nest `Logger`, or anything with these methods. */
export interface CallLogSink {
  debug?(message: unknown): void;
  log(message: unknown): void;
  warn(message: unknown): void;
}

/** Which of the call lines' levels the sink writes, read once when the app starts. */
export type CallLogLevels = Readonly<Record<CallLogLevel, boolean>>;

/**
 * One line per finished call, at the level its outcome calls for (`callLogLevel`): a failure of
 * a dependency, a store or the code at `warn`, a refusal by the service's own rules at `log`, a
 * success at `debug`. A line that would not be written is never built: the success path of a
 * service at `log` costs a comparison. A call of an audited tool gets its audit line too, at
 * `log` whatever its outcome (docs/operations.md, "Audit trail").
 */
export class CallLog {
  constructor(
    private readonly sink: CallLogSink,
    private readonly levels: CallLogLevels,
  ) {}

  /** What to subscribe to the call outcomes; undefined when no call line can be written at all. */
  listener(): ((outcome: CallOutcome) => void) | undefined {
    const { debug, log, warn } = this.levels;
    if (!debug && !log && !warn) return undefined;
    return (outcome) => this.write(outcome);
  }

  write(outcome: CallOutcome): void {
    const level = callLogLevel(outcome.status);
    if (this.levels[level]) this.sink[level]?.(new CallLogRecord(lineOf(outcome)));
    if (outcome.audit !== undefined && this.levels.log) this.sink.log(logRecord(auditLineOf(outcome, outcome.audit)));
  }
}

/** A tool call's audit line: who called what, through which pool, how it ended; of the arguments only their digest. */
export interface AuditLine {
  msg: 'tool call';
  event: 'audit';
  callId: string;
  tenant: string;
  tool: string;
  toolKind: string;
  upstream: string | undefined;
  lane: string;
  pool: 'normal' | 'isolated' | undefined;
  transport: string;
  /** `ok`, an error kind, `cancelled` or `finished_after_caller_cancel`. */
  outcome: string;
  statusCode: number | undefined;
  attempts: number;
  durationMs: number;
  replayed: boolean;
  argumentsDigest: string;
}

export function auditLineOf(outcome: CallOutcome, audit: CallAudit): AuditLine {
  return {
    msg: 'tool call',
    event: 'audit',
    callId: outcome.callId,
    tenant: outcome.tenant,
    tool: outcome.toolId,
    toolKind: audit.toolKind,
    upstream: audit.upstream,
    lane: outcome.lane,
    pool: outcome.pool,
    transport: outcome.transport ?? 'http',
    outcome: outcome.status,
    statusCode: outcomeStatusCode(outcome.status),
    attempts: outcome.attempts,
    durationMs: outcome.durationMs,
    replayed: outcome.replayed,
    argumentsDigest: audit.argumentsDigest,
  };
}

/** The line of a finished call: only the outcome's fixed fields, all of them validated names or numbers. */
export function lineOf(outcome: CallOutcome): CallLogLine {
  const line: CallLogLine = {
    msg: callLogMessage(outcome.status),
    event: 'call',
    callId: outcome.callId,
    tenant: outcome.tenant,
    tool: outcome.toolId,
    // A company route under @CircuitBreaker alone has no lane.
    lane: outcome.lane === '' ? undefined : outcome.lane,
    pool: outcome.pool,
    kind: outcome.status,
    statusCode: outcomeStatusCode(outcome.status),
    attempts: outcome.attempts,
    durationMs: outcome.durationMs,
  };
  if (outcome.replayed) line.replayed = true;
  if (outcome.chaos) line.chaos = outcome.chaos;
  if (outcome.transport !== undefined && outcome.transport !== 'http') line.transport = outcome.transport;
  if (outcome.target !== undefined) {
    line.target = outcome.target;
    line.choice = outcome.choice;
  }
  return line;
}

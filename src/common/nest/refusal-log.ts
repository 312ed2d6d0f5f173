import { Logger } from '@nestjs/common';
import { callLogLevel, type CallLogLevel, type CallLogLine, callLogMessage, CallLogRecord } from '../call-log-line';
import type { ResilienceError } from '../errors/resilience-error';

/** What is known of a request refused before any call began: only what was validated by then. */
export interface Refusal {
  callId?: string;
  tenant?: string;
  tool?: string;
  pool?: 'normal' | 'isolated';
  /** Absent where the platform keeps no request start (Express). */
  durationMs?: number;
  /** `METHOD /pattern` of the route it matched; absent when it matched none. */
  route?: string;
}

/**
 * The line of a failure that no call outcome reported (`wasReported`): a request refused before
 * its call began (an unknown tool or LLM route, a bad header or body, no key, a contained
 * tenant), a batch entry refused likewise, or a failure of a route that is no call (admin,
 * events). Same fields and level rule as a call's line; a request that matched no route at
 * all (a scanner's guess) is only `debug`. Its level is asked per line: these are refusals,
 * never the success path.
 */
export function logRefusal(logger: Logger, failure: ResilienceError, refusal: Refusal, matchedRoute = true): void {
  const level: CallLogLevel = matchedRoute ? callLogLevel(failure.kind) : 'debug';
  if (!Logger.isLevelEnabled(level)) return;
  const line: CallLogLine = {
    msg: callLogMessage(failure.kind),
    event: refusal.callId === undefined ? 'request' : 'call',
    callId: refusal.callId,
    tenant: refusal.tenant,
    tool: refusal.tool,
    lane: undefined,
    pool: refusal.pool,
    kind: failure.kind,
    statusCode: failure.status,
    attempts: failure.attempts,
    durationMs: refusal.durationMs,
    route: refusal.route,
  };
  logger[level](new CallLogRecord(line));
}

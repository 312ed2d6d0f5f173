import { inspect } from 'node:util';
import { ERROR_KINDS, isErrorKind } from './errors/error-kinds';
import { oneLineText } from './log-record';

/** The Nest log level a call's line is written at. */
export type CallLogLevel = 'debug' | 'log' | 'warn';

/**
 * Outcomes where something failed that an operator should look at: a dependency (`transient`,
 * `timeout`), a store (`unavailable`), a bug (`internal`, a company handler's own `error`), or a
 * destination the egress rules refused (a allow list that misses a host, or a call steered at a
 * private address). Every other failure is the service refusing a call by its own rules, as
 * designed (a full queue, an open circuit, a budget, a rate limit, a bad or unknown request, a
 * client that left): those are `log`.
 */
const WARN_OUTCOMES: ReadonlySet<string> = new Set([
  'transient',
  'timeout',
  'unavailable',
  'internal',
  'error',
  'egress_denied',
]);

/** The level of a call's line by its outcome (`ok`, an error kind, `cancelled`, ...): successes are `debug`. */
export function callLogLevel(outcome: string): CallLogLevel {
  if (outcome === 'ok') return 'debug';
  return WARN_OUTCOMES.has(outcome) ? 'warn' : 'log';
}

/**
 * One call's log line: fixed fields from validated values only (configured names, the validated
 * call id, the tenant its key or resolver gave). Never arguments, results, prompts, bodies,
 * headers, keys or tokens. Written as an object message (`msg` inside), the convention pino and
 * nestjs-pino take as the line's fields.
 */
export interface CallLogLine {
  msg: string;
  event: 'call' | 'request';
  callId: string | undefined;
  tenant: string | undefined;
  /** The tool, `llm.<route>`, or `Controller.method` for a company's `@Bulkhead` route. */
  tool: string | undefined;
  lane: string | undefined;
  pool: 'normal' | 'isolated' | undefined;
  /** `ok`, an error kind, `cancelled` or `finished_after_caller_cancel` (the client left). */
  kind: string;
  /** The HTTP status of the answer; none when the client left before it. */
  statusCode: number | undefined;
  attempts: number;
  /** Absent only on a refusal's line where the platform keeps no request start (Express). */
  durationMs: number | undefined;
  /** Only when the outcome was another call's (joined or replayed by idempotency key, a cache hit). */
  replayed?: true;
  /** Only on a call chaos touched: what it injected into its attempts, in order. */
  chaos?: readonly string[];
  /** Only on a call that came another way than the HTTP routes: `mcp`. */
  transport?: string;
  /** `METHOD /pattern` of a request refused before any call began (never the URL itself). */
  route?: string;
  /** Only on an LLM request that reached a target: the `provider/model` that served it, or the last one tried. */
  target?: string;
  /** With `target`: why its route chose it (`position`, `weight`, `least_busy`, `lowest_latency`, `no_latency_sample`, `hedge`). */
  choice?: string;
}

/**
 * A call's line as the object a logger is handed: its fields for a JSON logger, one line of
 * text under `util.inspect` (`oneLineText`). A class, not a prototype given to a copy: it is built
 * for every refused call, and costs what the plain object does (a prototype set on a copy cost
 * about 100 ns more a line, and slowed its JSON too).
 */
export class CallLogRecord implements CallLogLine {
  msg: string;
  event: 'call' | 'request';
  callId: string | undefined;
  tenant: string | undefined;
  tool: string | undefined;
  lane: string | undefined;
  pool: 'normal' | 'isolated' | undefined;
  kind: string;
  statusCode: number | undefined;
  attempts: number;
  durationMs: number | undefined;
  declare replayed?: true;
  declare chaos?: readonly string[];
  declare transport?: string;
  declare route?: string;
  declare target?: string;
  declare choice?: string;

  constructor(line: CallLogLine) {
    this.msg = line.msg;
    this.event = line.event;
    this.callId = line.callId;
    this.tenant = line.tenant;
    this.tool = line.tool;
    this.lane = line.lane;
    this.pool = line.pool;
    this.kind = line.kind;
    this.statusCode = line.statusCode;
    this.attempts = line.attempts;
    this.durationMs = line.durationMs;
    // Only the fields a line has: a JSON line never shows one it has not.
    if (line.replayed !== undefined) this.replayed = line.replayed;
    if (line.chaos !== undefined) this.chaos = line.chaos;
    if (line.transport !== undefined) this.transport = line.transport;
    if (line.route !== undefined) this.route = line.route;
    if (line.target !== undefined) {
      this.target = line.target;
      this.choice = line.choice;
    }
  }

  [inspect.custom](): string {
    return oneLineText(this);
  }
}

const messages = new Map<string, string>();

/** `call ok`, `call failed (timeout)`, `call refused (queue_full)`, `call cancelled (...)`; made once per outcome. */
export function callLogMessage(outcome: string): string {
  let message = messages.get(outcome);
  if (message === undefined) {
    const level = callLogLevel(outcome);
    if (outcome === 'ok') message = 'call ok';
    else if (outcome === 'cancelled' || outcome === 'finished_after_caller_cancel')
      message = `call cancelled (${outcome})`;
    else message = `call ${level === 'warn' ? 'failed' : 'refused'} (${outcome})`;
    messages.set(outcome, message);
  }
  return message;
}

/** The HTTP status a call's outcome was answered with: 200, the kind's own, or none (the client left). */
export function outcomeStatusCode(outcome: string): number | undefined {
  if (outcome === 'ok') return 200;
  return isErrorKind(outcome) ? ERROR_KINDS[outcome].status : outcome === 'error' ? 500 : undefined;
}

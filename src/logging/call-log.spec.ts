import { ConsoleLogger } from '@nestjs/common';
import type { CallOutcome } from '../events';
import { CallLog, type CallLogLevels, type CallLogSink, lineOf } from './call-log';

function outcome(status: string, extra: Partial<CallOutcome> = {}): CallOutcome {
  return {
    callId: 'c-1',
    toolId: 'search',
    lane: 'main',
    tenant: 'acme',
    pool: 'normal',
    status,
    durationMs: 12.5,
    attempts: 2,
    replayed: false,
    ...extra,
  };
}

/** A sink that keeps `[level, message]`. */
function recording(): CallLogSink & { written: Array<[string, unknown]> } {
  const written: Array<[string, unknown]> = [];
  return {
    written,
    debug: (message) => written.push(['debug', message]),
    log: (message) => written.push(['log', message]),
    warn: (message) => written.push(['warn', message]),
  };
}

const ALL: CallLogLevels = { debug: true, log: true, warn: true };

describe('CallLog', () => {
  it.each([
    ['transient', 'warn'],
    ['timeout', 'warn'],
    ['unavailable', 'warn'],
    ['internal', 'warn'],
    ['error', 'warn'],
    ['egress_denied', 'warn'],
    ['queue_full', 'log'],
    ['overloaded', 'log'],
    ['queue_expired', 'log'],
    ['circuit_open', 'log'],
    ['rate_limited', 'log'],
    ['budget_exceeded', 'log'],
    ['schema', 'log'],
    ['invalid_request', 'log'],
    ['not_found', 'log'],
    ['unauthorized', 'log'],
    ['contained', 'log'],
    ['idempotency_conflict', 'log'],
    ['tool_changed', 'log'],
    ['stopped', 'log'],
    ['cancelled', 'log'],
    ['finished_after_caller_cancel', 'log'],
    ['ok', 'debug'],
  ])('writes a call that ended %s at %s', (status, level) => {
    const sink = recording();
    new CallLog(sink, ALL).write(outcome(status));
    expect(sink.written.map(([written]) => written)).toEqual([level]);
  });

  it('writes the fixed fields of the outcome and nothing else', () => {
    expect(lineOf(outcome('timeout'))).toEqual({
      msg: 'call failed (timeout)',
      event: 'call',
      callId: 'c-1',
      tenant: 'acme',
      tool: 'search',
      lane: 'main',
      pool: 'normal',
      kind: 'timeout',
      statusCode: 504,
      attempts: 2,
      durationMs: 12.5,
    });
    expect(lineOf(outcome('queue_full'))).toMatchObject({ msg: 'call refused (queue_full)', statusCode: 503 });
    expect(lineOf(outcome('ok'))).toMatchObject({ msg: 'call ok', statusCode: 200 });
    expect(lineOf(outcome('cancelled'))).toMatchObject({ msg: 'call cancelled (cancelled)', statusCode: undefined });
  });

  it('marks a replayed outcome and the chaos injected, only when there is some', () => {
    const line = lineOf(outcome('transient', { replayed: true, chaos: ['latency', 'transient'] }));
    expect(line).toMatchObject({ replayed: true, chaos: ['latency', 'transient'] });
    expect(Object.keys(lineOf(outcome('ok')))).not.toEqual(expect.arrayContaining(['replayed', 'chaos']));
  });

  it('says a call came over MCP, and says nothing of the HTTP routes', () => {
    expect(lineOf(outcome('timeout', { transport: 'mcp' })).transport).toBe('mcp');
    expect(lineOf(outcome('timeout', { transport: 'http' }))).not.toHaveProperty('transport');
  });

  it('leaves out the lane of a company route that has none', () => {
    expect(lineOf(outcome('timeout', { lane: '' })).lane).toBeUndefined();
  });

  it('builds no line at a level the logger does not write', () => {
    const sink = recording();
    const log = new CallLog(sink, { debug: false, log: false, warn: true });
    let fieldsRead = 0;
    const watched = (status: string): CallOutcome => ({
      ...outcome(status),
      get callId() {
        fieldsRead++;
        return 'c-1';
      },
    });

    log.write(watched('ok'));
    log.write(watched('queue_full'));
    expect(fieldsRead).toBe(0);

    log.write(watched('timeout'));
    expect(fieldsRead).toBe(1);
    expect(sink.written.map(([level]) => level)).toEqual(['warn']);
  });

  it('subscribes nothing when no call line can be written', () => {
    expect(new CallLog(recording(), { debug: false, log: false, warn: false }).listener()).toBeUndefined();
    const listener = new CallLog(recording(), { debug: false, log: true, warn: true }).listener();
    expect(listener).toEqual(expect.any(Function));
  });
});

describe('a call line in a host app whose logger prints objects (Nest ConsoleLogger)', () => {
  /** What a real ConsoleLogger writes to stdout for one refused call. */
  function printed(status: string, extra: Partial<CallOutcome> = {}): string {
    const chunks: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
    try {
      const logger = new ConsoleLogger('Bulkhead', { logLevels: ['log', 'warn'], colors: false, timestamp: false });
      new CallLog(logger, { debug: false, log: true, warn: true }).write(outcome(status, extra));
    } finally {
      write.mockRestore();
    }
    return chunks.join('');
  }

  it('is one line, naming the outcome, with the fields the call had and no undefined ones', () => {
    const text = printed('queue_full', { lane: '', pool: undefined as never });

    expect(text.split('\n').filter((line) => line !== '')).toHaveLength(1);
    expect(text).toContain(
      'call refused (queue_full) event=call callId=c-1 tenant=acme tool=search kind=queue_full statusCode=503 attempts=2 durationMs=12.5',
    );
    expect(text).not.toContain('undefined');
    expect(text).not.toContain('lane=');
  });

  it('keeps the same fields for a JSON logger, which writes the object itself', () => {
    const sink = recording();
    new CallLog(sink, ALL).write(outcome('queue_full'));

    expect(JSON.parse(JSON.stringify(sink.written[0][1]))).toEqual(
      JSON.parse(JSON.stringify(lineOf(outcome('queue_full')))),
    );
  });
});

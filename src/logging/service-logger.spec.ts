import { CapturedLog } from '../../test/support/captured-log';
import { logFormatFrom } from './log-format';
import { createServiceLogger, type PrettyFactory } from './service-logger';

describe('createServiceLogger', () => {
  it('writes JSON lines at the configured level', () => {
    const log = new CapturedLog();
    const logger = createServiceLogger({ level: 'warn', destination: log });

    logger.log('hidden', 'Bulkhead');
    logger.warn({ msg: 'shown', event: 'call' }, 'Bulkhead');

    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'warn', msg: 'shown', event: 'call', context: 'Bulkhead' }),
    ]);
    expect(log.lines[0]).toEqual(expect.objectContaining({ time: expect.any(Number), pid: process.pid }));
  });

  it('writes lines for a person when pretty is asked for and pino-pretty is there', () => {
    const log = new CapturedLog();
    const logger = createServiceLogger({ level: 'log', format: 'pretty', destination: log });

    logger.warn({ msg: 'call failed (timeout)', event: 'call', tool: 'search' }, 'Bulkhead');

    expect(log.text).toMatch(
      /^\[[\d:.]+\] WARN: \[Bulkhead\] call failed \(timeout\) \{"event":"call","tool":"search"\}\n$/,
    );
  });

  it('falls back to JSON, with one warning, when pretty is asked for and pino-pretty is not installed', () => {
    const log = new CapturedLog();
    const missing: () => PrettyFactory = () => {
      throw Object.assign(new Error("Cannot find module 'pino-pretty'"), { code: 'MODULE_NOT_FOUND' });
    };
    const logger = createServiceLogger({ level: 'log', format: 'pretty', destination: log, loadPretty: missing });

    logger.log('still written', 'Bulkhead');

    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'warn', event: 'logging', msg: expect.stringContaining('pino-pretty') }),
      expect.objectContaining({ level: 'info', msg: 'still written' }),
    ]);
  });
});

describe('logFormatFrom', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['json', 'json'],
    ['pretty', 'pretty'],
  ])('reads LOG_FORMAT=%p as %s', (value, format) => {
    expect(logFormatFrom(value === undefined ? {} : { LOG_FORMAT: value })).toEqual({ format });
  });

  it('takes another value as JSON, with a problem to log instead of a failed start', () => {
    expect(logFormatFrom({ LOG_FORMAT: 'colour' })).toEqual({
      format: 'json',
      problem: 'LOG_FORMAT must be json or pretty; writing JSON',
    });
  });
});

import { Logger } from '@nestjs/common';
import pino from 'pino';
import { CapturedLog } from '../../test/support/captured-log';
import { PinoLoggerService } from './pino-logger.service';

describe('PinoLoggerService', () => {
  let log: CapturedLog;

  const service = (level: 'error' | 'warn' | 'log' | 'debug' | 'verbose') => {
    log = new CapturedLog();
    return new PinoLoggerService(pino({ formatters: { level: (label) => ({ level: label }) } }, log), level);
  };

  afterEach(() => Logger.overrideLogger(false));

  it('writes one JSON line per message, with the level by name and the context Nest passes', () => {
    const logger = service('log');

    logger.log('hello', 'Bulkhead');
    logger.warn('careful');

    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'info', context: 'Bulkhead', msg: 'hello' }),
      expect.objectContaining({ level: 'warn', msg: 'careful' }),
    ]);
    expect(log.lines[1]).not.toHaveProperty('context');
  });

  it('makes an object message the line’s fields, its msg the line’s text', () => {
    const logger = service('log');

    logger.warn(
      { msg: 'call failed (timeout)', event: 'call', tool: 'search', attempts: 3, tenant: undefined },
      'Bulkhead',
    );

    expect(log.lines[0]).toMatchObject({ msg: 'call failed (timeout)', event: 'call', tool: 'search', attempts: 3 });
    expect(log.lines[0]).not.toHaveProperty('tenant');
  });

  it('reads error(message, stack, context) as Nest passes it, and a context-less stack as a stack', () => {
    const logger = service('log');
    const stack = new Error('x').stack!;

    logger.error('boom', stack, 'Bulkhead');
    logger.error('plain', undefined, 'Bulkhead');
    logger.error('bare', stack);

    expect(log.lines).toEqual([
      expect.objectContaining({ level: 'error', msg: 'boom', context: 'Bulkhead', stack }),
      expect.objectContaining({ level: 'error', msg: 'plain', context: 'Bulkhead' }),
      expect.objectContaining({ level: 'error', msg: 'bare', stack }),
    ]);
    expect(log.lines[1]).not.toHaveProperty('stack');
    expect(log.lines[2]).not.toHaveProperty('context');
  });

  it('writes only the configured level and the more severe ones', () => {
    const logger = service('warn');

    logger.debug('d', 'Bulkhead');
    logger.log('l', 'Bulkhead');
    logger.warn('w', 'Bulkhead');
    logger.error('e', undefined, 'Bulkhead');

    expect(log.lines.map((line) => line.msg)).toEqual(['w', 'e']);
    expect([logger.isLevelEnabled('log'), logger.isLevelEnabled('warn')]).toEqual([false, true]);
  });

  it('puts Nest’s start-up chatter (modules, routes mapped) at debug', () => {
    const quiet = service('log');
    quiet.log('Mapped {/v1/lanes, GET} route', 'RouterExplorer');
    quiet.log('LanesController {/v1/lanes}:', 'RoutesResolver');
    quiet.log('AppModule dependencies initialized', 'InstanceLoader');
    quiet.log('Nest application successfully started', 'NestApplication');
    expect(log.lines.map((line) => line.context)).toEqual(['NestApplication']);

    const chatty = service('debug');
    chatty.log('Mapped {/v1/lanes, GET} route', 'RouterExplorer');
    expect(log.lines).toEqual([expect.objectContaining({ level: 'debug', context: 'RouterExplorer' })]);
  });

  it('answers Nest’s Logger.isLevelEnabled once installed, and follows levels set later, on every context', () => {
    const logger = service('log');
    Logger.overrideLogger(logger);
    new Logger('Bulkhead').debug('before');
    expect([Logger.isLevelEnabled('debug'), Logger.isLevelEnabled('log')]).toEqual([false, true]);

    Logger.overrideLogger(['error', 'warn', 'log', 'debug']);
    new Logger('Bulkhead').debug('after');

    expect(Logger.isLevelEnabled('debug')).toBe(true);
    expect(log.lines.map((line) => line.msg)).toEqual(['after']);
  });
});

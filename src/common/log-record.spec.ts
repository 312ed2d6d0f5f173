import { ConsoleLogger } from '@nestjs/common';
import { inspect } from 'node:util';
import { logRecord } from './log-record';

describe('logRecord', () => {
  it('prints as one line: the message, then each field it has as name=value, lists joined', () => {
    const record = logRecord({
      msg: 'shutting down',
      event: 'shutdown',
      drainMs: 10_000,
      gone: undefined,
      tried: ['a', 'b'],
    });

    expect(inspect(record)).toBe('shutting down event=shutdown drainMs=10000 tried=a,b');
  });

  it('keeps its fields as they are for a logger that writes JSON', () => {
    const fields = { msg: 'redis: connected', event: 'redis', state: 'connected', endpoint: '127.0.0.1:6379' };

    expect(JSON.parse(JSON.stringify(logRecord(fields)))).toEqual(fields);
    expect({ ...logRecord(fields) }).toEqual(fields);
  });

  it("is one line under Nest's ConsoleLogger, colours and all", () => {
    const chunks: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      chunks.push(String(chunk));
      return true;
    });
    try {
      new ConsoleLogger('Bulkhead', { colors: true }).log(
        logRecord({ msg: 'drained', event: 'shutdown', cause: undefined }),
      );
    } finally {
      write.mockRestore();
    }

    expect(chunks.join('').trimEnd().split('\n')).toHaveLength(1);
    expect(chunks.join('')).toContain('drained event=shutdown');
    expect(chunks.join('')).not.toContain('undefined');
  });
});

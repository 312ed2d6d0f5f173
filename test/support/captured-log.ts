import { Writable } from 'node:stream';

/** One JSON log line, parsed. */
export type LogLine = Record<string, unknown> & { level: string; msg?: string; context?: string; event?: string };

/**
 * A log destination (pino's, or pino-pretty's, which needs a Node stream) that keeps what the
 * logger wrote: the raw text, and each line parsed.
 */
export class CapturedLog extends Writable {
  /** Everything written, as written. */
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }

  /** Each line, parsed, in the order written. */
  get lines(): LogLine[] {
    return this.text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** The lines of one `event` (`call`, `breaker`, `containment`, ...). */
  events(event: string): LogLine[] {
    return this.lines.filter((line) => line.event === event);
  }

  clear(): void {
    this.text = '';
  }
}

import { inspect } from 'node:util';

/**
 * What a structured line prints as where a logger formats objects with `util.inspect` (Nest's
 * ConsoleLogger in a host app): one line of text, `call refused (queue_full) tenant=acme ...`,
 * with the fields the line has and none it has not, instead of a many-line object with
 * `undefined` in it. JSON loggers (the service's pino one) never look at it: they write the own
 * fields, as of any object.
 */
export function oneLineText(record: { msg: string }): string {
  let text = record.msg;
  for (const [name, value] of Object.entries(record)) {
    if (name === 'msg' || value === undefined) continue;
    text += ` ${name}=${Array.isArray(value) ? value.join(',') : String(value)}`;
  }
  return text;
}

const ONE_LINE: object = Object.freeze({
  [inspect.custom](this: { msg: string }): string {
    return oneLineText(this);
  },
});

/**
 * `fields` as the object a logger is handed: the same fields, printed on one line by
 * `util.inspect`. For the rare lines (start-up, shutdown, Redis, breakers); a call's line, written
 * for every refused call, is a `CallLogRecord`, which costs what a plain object does.
 */
export function logRecord<T extends { msg: string }>(fields: T): T {
  return Object.assign(Object.create(ONE_LINE) as T, fields);
}

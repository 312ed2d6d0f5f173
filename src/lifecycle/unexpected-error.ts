/** Where an error nobody handled surfaced: the process event that caught it. */
export type UnexpectedErrorWhere = 'unhandled_rejection' | 'uncaught_exception';

export const UNEXPECTED_ERROR_WHERE: readonly UnexpectedErrorWhere[] = ['unhandled_rejection', 'uncaught_exception'];

/** What a log line may say about an error nobody handled: its class, never its message. */
export interface UnexpectedErrorDescription {
  /**
   * The error's class (`TypeError`, `SyntaxError`, `ResilienceError`): its constructor's name,
   * which code wrote, not its `name` property, which anyone may set. `non-error <typeof>` for a
   * thrown value that is not an Error.
   */
  errorName: string;
  /** A Node or library error code (`ERR_STREAM_PREMATURE_CLOSE`), when it looks like one. */
  code?: string;
  /** The stack's frames, without its first line (which holds the message). */
  frames?: string[];
  /** The names of its `cause` chain, outermost first. */
  causes?: string[];
}

const NAME = /^[A-Za-z_$][\w$]{0,63}$/;
const CODE = /^[A-Z][A-Z0-9_]{0,39}$/;
const FRAME = /^ {4}at [^\n]{1,300}$/;
const MAX_FRAMES = 20;
const MAX_CAUSES = 3;

/**
 * Describes a thrown or rejected value for a log line without a byte of its payload. An
 * error's message is not safe to log: `JSON.parse` quotes the text it failed on, a TypeError
 * names the property it missed, and an upstream's body may be in either. So the line gets the
 * error's class, its code (when it looks like one), and its stack frames only when the
 * message can be cut off exactly: a stack that does not start with `name: message` (a message
 * changed after the error was made, a forged `stack`) is left out, as its first lines could be
 * anything. Never throws, whatever the value (getters that throw, proxies, `null`).
 */
export function describeUnexpected(value: unknown): UnexpectedErrorDescription {
  try {
    return describe(value);
  } catch {
    return { errorName: 'unreadable' };
  }
}

function describe(value: unknown): UnexpectedErrorDescription {
  if (!(value instanceof Error)) return { errorName: `non-error ${value === null ? 'null' : typeof value}` };
  const errorClass = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const description: UnexpectedErrorDescription = { errorName: identifier(errorClass, NAME) ?? 'Error' };
  const code = identifier((value as { code?: unknown }).code, CODE);
  if (code) description.code = code;
  const frames = framesOf(value);
  if (frames) description.frames = frames;
  const causes = causeNames(value);
  if (causes.length > 0) description.causes = causes;
  return description;
}

function identifier(value: unknown, pattern: RegExp): string | undefined {
  return typeof value === 'string' && pattern.test(value) ? value : undefined;
}

function framesOf(error: Error): string[] | undefined {
  const { stack, name, message } = error;
  if (typeof stack !== 'string' || typeof name !== 'string' || typeof message !== 'string') return undefined;
  // V8 writes `name: message`, or `name` alone for an empty message, then the frames.
  const header = message === '' ? name : `${name}: ${message}`;
  if (!stack.startsWith(`${header}\n`)) return undefined;
  const frames = stack
    .slice(header.length + 1)
    .split('\n')
    .slice(0, MAX_FRAMES);
  return frames.every((frame) => FRAME.test(frame)) ? frames.map((frame) => frame.trim()) : undefined;
}

function causeNames(error: Error): string[] {
  const names: string[] = [];
  let cause: unknown = error.cause;
  while (cause !== undefined && names.length < MAX_CAUSES) {
    names.push(describe(cause).errorName);
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return names;
}

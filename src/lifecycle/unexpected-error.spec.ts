import fc from 'fast-check';
import { describeUnexpected } from './unexpected-error';

/** What every message in these tests starts with: it must not appear in any description. */
const MARK = 'PAYLOAD';

function parseFailure(text: string): Error {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  throw new Error('parsed');
}

describe('describeUnexpected', () => {
  it('says the class, the code and the frames of an error, never its message', () => {
    const error = Object.assign(new TypeError(`${MARK}: Cannot read properties of undefined`), { code: 'ERR_X' });
    const description = describeUnexpected(error);
    expect(description).toMatchObject({ errorName: 'TypeError', code: 'ERR_X' });
    expect(description.frames?.[0]).toMatch(/^at /);
    expect(JSON.stringify(description)).not.toContain(MARK);
  });

  it('leaves out the text a JSON.parse SyntaxError quotes', () => {
    const description = describeUnexpected(parseFailure(`{"delta": ${MARK}}`));
    expect(description.errorName).toBe('SyntaxError');
    expect(description.frames?.length).toBeGreaterThan(0);
    expect(JSON.stringify(description)).not.toContain(MARK);
  });

  it('names the causes by class', () => {
    const error = new Error(MARK, { cause: new RangeError(MARK, { cause: 'a string' }) });
    expect(describeUnexpected(error).causes).toEqual(['RangeError', 'non-error string']);
  });

  it('leaves out a stack that does not start with its own message (changed after it was read, or forged)', () => {
    const changed = new Error(`${MARK} before`);
    expect(changed.stack).toContain(MARK); // V8 writes the stack when it is first read
    changed.message = 'after';
    const forged = new Error('x');
    forged.stack = `Error: x\n    at ${MARK} (evil)`.replace('Error: x\n', 'Error: y\n');
    expect(describeUnexpected(changed).frames).toBeUndefined();
    expect(describeUnexpected(forged).frames).toBeUndefined();
  });

  it('says only the type of a value that is not an error', () => {
    expect(describeUnexpected(`${MARK} as a string`)).toEqual({ errorName: 'non-error string' });
    expect(describeUnexpected({ message: MARK })).toEqual({ errorName: 'non-error object' });
    expect(describeUnexpected(null)).toEqual({ errorName: 'non-error null' });
  });

  it('survives values whose reading throws', () => {
    const hostile = new Error(MARK);
    Object.defineProperty(hostile, 'name', {
      get() {
        throw new Error('no');
      },
    });
    expect(describeUnexpected(hostile)).toEqual({ errorName: 'unreadable' });
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    expect(() => describeUnexpected(revoked.proxy)).not.toThrow();
  });

  it('never throws and never carries a message, whatever was thrown (property)', () => {
    const errorClasses = [Error, TypeError, RangeError, SyntaxError] as const;
    const thrownError = fc
      .record({
        kind: fc.integer({ min: 0, max: errorClasses.length - 1 }),
        message: fc.string({ unit: 'binary' }),
        name: fc.option(fc.string(), { nil: undefined }),
        code: fc.option(fc.anything(), { nil: undefined }),
        cause: fc.option(fc.anything(), { nil: undefined }),
      })
      .map(({ kind, message, name, code, cause }) => {
        const error = new errorClasses[kind](`${MARK}${message}`, { cause });
        if (name !== undefined) error.name = `${MARK}${name}`;
        if (code !== undefined) Object.assign(error, { code });
        return error;
      });
    fc.assert(
      fc.property(fc.oneof(thrownError, fc.anything()), (value) => {
        const text = JSON.stringify(describeUnexpected(value));
        expect(text).not.toContain(MARK);
      }),
      { numRuns: 500 },
    );
  });
});

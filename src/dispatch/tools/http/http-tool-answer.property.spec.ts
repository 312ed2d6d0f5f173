import fc from 'fast-check';
import { isResilienceError, jsonDepthExceeds, MAX_JSON_DEPTH } from '../../../common';
import { toolAnswerOf } from './http-tool-answer';

const JSON_TYPE = 'application/json; charset=utf-8';

/** `[[[...]]]` `depth` levels deep, as text: what a hostile upstream sends in a few bytes a level. */
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('toolAnswerOf', () => {
  it('answers null for an empty body, the text for a body that is not JSON, the value for JSON', () => {
    expect(toolAnswerOf('t', Buffer.alloc(0), JSON_TYPE)).toBeNull();
    expect(toolAnswerOf('t', Buffer.from('{"a":1}'), 'text/plain')).toBe('{"a":1}');
    expect(toolAnswerOf('t', Buffer.from('{"a":[1,{"b":null}]}'), 'application/problem+json')).toEqual({
      a: [1, { b: null }],
    });
  });

  it('refuses malformed JSON as transient, naming the tool and never the body', () => {
    const error = (() => {
      try {
        toolAnswerOf('lookup', Buffer.from('{"secret": tru'), JSON_TYPE);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toMatchObject({ kind: 'transient', message: "upstream of tool 'lookup' answered malformed JSON" });
  });

  it('refuses JSON nested past the request body limit, and serves it at the limit', () => {
    expect(() => toolAnswerOf('t', Buffer.from(nested(100_000)), JSON_TYPE)).toThrow(
      expect.objectContaining({ kind: 'transient', message: expect.stringContaining('nested deeper than 64') }),
    );
    expect(() => toolAnswerOf('t', Buffer.from(nested(MAX_JSON_DEPTH + 1)), JSON_TYPE)).toThrow();
    expect(() => toolAnswerOf('t', Buffer.from(nested(MAX_JSON_DEPTH)), JSON_TYPE)).not.toThrow();
  });

  it('answers what JSON.stringify can write, or a transient failure, whatever the body (property)', () => {
    const hostileKeys = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toJSON', 'then');
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        fc.dictionary(fc.oneof(fc.string(), hostileKeys), tie('node'), { maxKeys: 4 }),
        fc.array(tie('node'), { maxLength: 4 }),
      ),
    })).node;
    const body = fc.oneof(
      value.map((answer) => JSON.stringify(answer) ?? ''),
      fc.integer({ min: 0, max: 3_000 }).map(nested),
      fc.string(),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
    );
    fc.assert(
      fc.property(body, fc.constantFrom(JSON_TYPE, 'text/plain', undefined), (text, type) => {
        let answer: unknown;
        try {
          answer = toolAnswerOf('t', Buffer.from(text), type);
        } catch (error) {
          expect(isResilienceError(error) && error.kind === 'transient').toBe(true);
          return;
        }
        expect(jsonDepthExceeds(answer, MAX_JSON_DEPTH)).toBe(false);
        expect(() => JSON.stringify(answer)).not.toThrow();
        expect(Object.getPrototypeOf({})).toBe(Object.prototype);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 1_000 },
    );
  });
});

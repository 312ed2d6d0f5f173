import { createHash } from 'node:crypto';
import { definitionDiff } from './definition-diff';
import { canonicalJson, definitionHash, pinnableOf } from './tool-definition-hash';

const ECHO = {
  name: 'echo',
  description: 'says the text back',
  inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 3 } }, required: ['text'] },
};

describe('definitionHash', () => {
  it('is the sha256 of the pinned fields as canonical JSON: keys sorted at every depth, no whitespace', () => {
    const expected =
      '{"description":"says the text back","inputSchema":{"properties":{"text":{"maxLength":3,"type":"string"}},' +
      '"required":["text"],"type":"object"},"name":"echo"}';

    expect(canonicalJson(pinnableOf(ECHO))).toBe(expected);
    expect(definitionHash(ECHO)).toBe(createHash('sha256').update(expected).digest('hex'));
  });

  it('is the same whatever order the server sends the keys in', () => {
    const reordered = {
      inputSchema: { required: ['text'], properties: { text: { maxLength: 3, type: 'string' } }, type: 'object' },
      description: 'says the text back',
      name: 'echo',
    };

    expect(definitionHash(reordered)).toBe(definitionHash(ECHO));
  });

  it('covers the description, both schemas and the annotations, and nothing else the listing carries', () => {
    const hash = definitionHash(ECHO);

    expect(definitionHash({ ...ECHO, description: 'says the text back.' })).not.toBe(hash);
    expect(definitionHash({ ...ECHO, outputSchema: { type: 'object' } })).not.toBe(hash);
    expect(definitionHash({ ...ECHO, annotations: { destructiveHint: true } })).not.toBe(hash);
    expect(definitionHash({ ...ECHO, title: 'Echo', _meta: { seen: 1 } } as typeof ECHO)).toBe(hash);
  });

  it('tells an absent description from an empty one', () => {
    const { description: _description, ...bare } = ECHO;

    expect(definitionHash(bare)).not.toBe(definitionHash({ ...bare, description: '' }));
  });
});

describe('definitionDiff', () => {
  it('names only the fields that differ, with their values before and after', () => {
    const after = { ...ECHO, description: 'says it back', annotations: { readOnlyHint: true } };

    expect(definitionDiff(ECHO, after)).toEqual({
      description: { old: 'says the text back', new: 'says it back' },
      annotations: { new: { readOnlyHint: true } },
    });
  });

  it('is empty for the same definition with its keys in another order', () => {
    const reordered = {
      inputSchema: { required: ['text'], type: 'object', properties: { text: { type: 'string', maxLength: 3 } } },
      name: 'echo',
      description: 'says the text back',
    };

    expect(definitionDiff(ECHO, reordered)).toEqual({});
  });

  it('shows every field of the new definition when the old one is not known (a pin from the config)', () => {
    expect(Object.keys(definitionDiff(undefined, ECHO))).toEqual(['name', 'description', 'inputSchema']);
  });
});

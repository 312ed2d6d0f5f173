import { FakeClock } from '../common/fake-clock';
import { toolEntrySchema as tool } from './tools/tool-schemas';
import { ToolKindSet } from './tool-kind-set';
import type { ToolKind } from './tools/tool-kind';
import { toolKinds } from './tools/tool-kinds';

const NO_POOLS = {
  get(): never {
    throw new Error('no pool in this spec');
  },
};

function kinds(): ToolKind[] {
  return toolKinds({
    pools: NO_POOLS,
    clock: new FakeClock(),
    logger: { log: () => undefined, warn: () => undefined },
  });
}

describe('ToolKindSet', () => {
  it('refuses two kinds of one name', () => {
    const [http] = kinds();

    expect(() => new ToolKindSet([...kinds(), { ...http }])).toThrow("two tool kinds are named 'http'");
  });

  it('names an entry whose kind no kind builds', () => {
    const set = new ToolKindSet(kinds());

    expect(() => set.of('odd', { kind: 'odd' })).toThrow("tool 'odd' is of kind 'odd', which no tool kind builds");
    expect(set.of('fetch', { kind: 'http' }).kind).toBe('http');
  });

  it('prepares each kind with its own entries, in config order, and those it has none of with none', async () => {
    const seen: Array<[string, string[]]> = [];
    const spy = (name: string): ToolKind => ({
      kind: name,
      schema: tool.options[0],
      build: () => {
        throw new Error('not built in this spec');
      },
      prepare: async (entries) => {
        seen.push([name, entries.map(([id]) => id)]);
      },
    });
    const set = new ToolKindSet([spy('a'), spy('b'), spy('c')]);

    await set.prepare([
      ['x', { kind: 'b' }],
      ['y', { kind: 'a' }],
      ['z', { kind: 'b' }],
    ]);

    expect(seen).toEqual([
      ['a', ['y']],
      ['b', ['x', 'z']],
      ['c', []],
    ]);
  });
});

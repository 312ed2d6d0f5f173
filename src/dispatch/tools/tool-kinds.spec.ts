import { FakeClock } from '../../common/fake-clock';
import { toolEntrySchema as tool } from './tool-schemas';
import type { ToolKind } from './tool-kind';
import { toolKinds } from './tool-kinds';

const NO_POOLS = {
  get(): never {
    throw new Error('no pool in this spec');
  },
};
const QUIET = { log: () => undefined, warn: () => undefined };

function kinds(): ToolKind[] {
  return toolKinds({ pools: NO_POOLS, clock: new FakeClock(), logger: QUIET });
}

describe('the kinds list', () => {
  it('has one kind for each member of the config’s tools union, whose schema is that member', () => {
    const byKind = new Map(kinds().map((kind) => [kind.kind, kind.schema]));

    expect([...byKind.keys()]).toEqual(tool.options.map((member) => member.shape.kind.value));
    for (const member of tool.options) expect(byKind.get(member.shape.kind.value)).toBe(member);
  });

  it('makes the kinds that hold something anew for each app', () => {
    const first = kinds();
    const second = kinds();

    const holding = first.filter((kind) => kind.close);
    expect(holding.map((kind) => kind.kind)).toEqual(['mcp']);
    expect(second.find((kind) => kind.kind === 'mcp')).not.toBe(holding[0]);
  });
});

import { Counter, Registry } from 'prom-client';
import { CounterFamily } from './counter-family';

describe('CounterFamily', () => {
  const settings = { name: 'x_total', help: 'help text', labelNames: ['route', 'target', 'kind'] };

  it("renders exactly the exposition of prom-client's own Counter for the same increments", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const family = new CounterFamily(ours, settings);
    const reference = new Counter({ ...settings, registers: [theirs] });
    const increments: Array<[string, string, string, number | undefined]> = [
      ['chat', 'openai/gpt-4o', 'prompt', 13],
      ['chat', 'openai/gpt-4o', 'completion', 7],
      ['chat', 'openai/gpt-4o', 'prompt', 2],
      ['other', 'anthropic/claude', 'prompt', 0],
      ['chat', 'anthropic/claude', 'completion', undefined],
      ['chat', 'anthropic/claude', 'completion', undefined],
    ];
    for (const [route, target, kind, by] of increments) {
      family.inc([route, target, kind], by);
      reference.inc({ route, target, kind }, by);
    }

    expect(await ours.metrics()).toBe(await theirs.metrics());
    // A scrape renders the counts, it does not move them: a second one says the same.
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('keeps label sets that share a prefix apart', async () => {
    const registry = new Registry();
    const family = new CounterFamily(registry, settings);
    family.inc(['a', 'b', 'c']);
    family.inc(['a', 'b', 'd'], 2);
    family.inc(['a', 'e', 'c'], 3);

    const text = await registry.metrics();
    expect(text).toContain('x_total{route="a",target="b",kind="c"} 1');
    expect(text).toContain('x_total{route="a",target="b",kind="d"} 2');
    expect(text).toContain('x_total{route="a",target="e",kind="c"} 3');
  });

  it('refuses label values that do not match its label names', () => {
    const family = new CounterFamily(new Registry(), settings);
    family.inc(['a', 'b', 'c']);
    expect(() => family.inc(['a', 'b'])).toThrow(/given 2 values/);
    expect(() => family.inc(['a', 'b', 'c', 'd'])).toThrow(/given 4 values/);
  });
});

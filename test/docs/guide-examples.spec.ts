import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../src/config';
import { codeBlocksOf } from './code-blocks';

/**
 * The guides' code blocks: a block the README also shows is run there
 * (test/docs/readme-examples.e2e-spec.ts); a config block is validated as the service would
 * validate its file, on top of the lanes it names (`general`, `llm`) when it names none; any other
 * block says in a `<!-- not run: ... -->` line why it is not run. None goes untested silently.
 */
const ROOT = resolve(__dirname, '../..');
const GUIDES = ['getting-started', 'llm-gateway', 'mcp', 'embedding', 'configuration', 'operations', 'developing'];
const README_BLOCKS = new Set(codeBlocksOf(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((block) => block.code));
/** What a config block's `${VAR}`s are set to, as in an environment that has them. */
const ENV = {
  OPENAI_API_KEY: 'sk-example',
  ANTHROPIC_API_KEY: 'sk-ant-example',
  SEARCH_MCP_TOKEN: 'token-example',
  BULKHEAD_ALLOW_CHAOS: 'true',
};
const LANES = { general: { concurrency: 16, queueCapacity: 64 }, llm: { concurrency: 8, queueCapacity: 32 } };

const blocks = GUIDES.flatMap((guide) =>
  codeBlocksOf(readFileSync(join(ROOT, 'docs', `${guide}.md`), 'utf8')).map((block, index) => ({
    ...block,
    name: `docs/${guide}.md, block ${index + 1} (${block.lang || 'text'})`,
  })),
);

describe("the guides' code blocks", () => {
  const configs = blocks.filter((block) => block.lang === 'yaml' && block.notRun === undefined);

  it.each(configs.map((block) => [block.name, block]))('%s is a valid config', (_name, block) => {
    const document = parseYaml(block.code) as Record<string, unknown>;
    const result = parseConfig({ lanes: LANES, ...document }, ENV);

    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('are each run (here or with the README), or say why not', () => {
    const silent = blocks.filter(
      (block) => block.notRun === undefined && block.lang !== 'yaml' && !README_BLOCKS.has(block.code),
    );

    expect(silent.map((block) => `${block.name}: ${block.code.split('\n')[0]}`)).toEqual([]);
  });
});

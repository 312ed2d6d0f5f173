import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import {
  listeningPort,
  SPAWNED_TEST_TIMEOUT_MS,
  spawnService,
  STARTUP_BOUND_MS,
  type ServiceProcess,
} from '../support/spawn-service';
import { anthropicMessage } from '../support/llm-answers';
import { Upstream } from '../support/upstream';
import { type CodeBlock, codeBlocksOf, runExample } from './code-blocks';

/**
 * Every code block of the README is run as a reader would run it, against the service started
 * the way the README starts it (config/default.yaml; only the port differs): the curls, the
 * OpenAI SDK, the MCP client, and the embedding example as a host app of its own. A block that
 * cannot run here says why in a `<!-- not run: ... -->` line just above it, and nothing else
 * may go untested.
 */
const ROOT = resolve(__dirname, '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const WORK = join(ROOT, 'test/docs/.examples');
const PUBLIC_ENTRY = join(ROOT, 'src/index');
const run = promisify(execFile);
/** A bound on one child run (an example, a shell block): minutes, for a loaded machine. */
const RUN_BOUND_MS = STARTUP_BOUND_MS;
/** A test starts the service or runs an example in a child: room for the child's bound and the test. */
const TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;

const blocks = codeBlocksOf(README);
const untested = new Set(blocks);

/** The README's block whose text contains `marker`; it counts as tested. */
function block(marker: string): CodeBlock {
  const found = blocks.filter((candidate) => candidate.code.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} README blocks contain ${JSON.stringify(marker)}`);
  untested.delete(found[0]);
  return found[0];
}

describe('the README, run as written', () => {
  let service: ServiceProcess;
  let base: string;

  beforeAll(async () => {
    mkdirSync(WORK, { recursive: true });
    service = spawnService({ PORT: '0' });
    base = `127.0.0.1:${await listeningPort(service)}`;
  }, TIMEOUT_MS);

  afterAll(async () => {
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(WORK, { recursive: true, force: true });
  });

  /** A shell block, pointed at this run's service. */
  async function shell(code: string): Promise<string> {
    const { stdout } = await run('sh', ['-c', code.replaceAll('localhost:3000', base)], { timeout: RUN_BOUND_MS });
    return stdout;
  }

  /** A TypeScript or JavaScript block as a file of its own, run by node (TypeScript through swc, as the tests are). */
  async function node(name: string, code: string, env: Record<string, string> = {}): Promise<string> {
    const file = join(WORK, name);
    writeFileSync(file, code.replaceAll('http://localhost:3000', `http://${base}`));
    return runExample(file, env, RUN_BOUND_MS);
  }

  /** A block that uses top-level `await`, as a CommonJS file: its imports first, the rest in an async function. */
  function asScript(code: string): string {
    const imports = code.match(/^import [\s\S]*?;\n/gm) ?? [];
    let body = code;
    for (const line of imports) body = body.replace(line, '');
    return `${imports.join('')}\n(async () => {\n${body}\n})().catch((error) => {\n  console.error(error);\n  process.exit(1);\n});\n`;
  }

  it(
    'calls a tool, lists the lanes and reads the metrics',
    async () => {
      const output = await shell(block('# call a tool through its lane').code);

      expect(output).toContain('"result":{"hello":"world"}');
      expect(output).toContain('"pool":"isolated"');
      expect(output).toContain('"lanes":{"render"');
      expect(output).toMatch(/^bulkhead_lane_active\{lane="render"\} 0$/m);
    },
    TIMEOUT_MS,
  );

  it(
    'fills the render lane: the fourth render is refused at once, the notes still answer',
    async () => {
      // The same commands, with renders of 300 ms instead of 5 s so the run takes about a second.
      const code = block('render_preview/invoke')
        .code.replace('"ms": 5000', '"ms": 300')
        .replace('sleep 0.5', 'sleep 0.1');
      const answers = (await shell(code))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));

      expect(answers).toHaveLength(5);
      expect(answers.filter((answer) => answer.error?.kind === 'queue_full')).toHaveLength(1);
      expect(answers.filter((answer) => answer.toolId === 'render_preview' && answer.result)).toHaveLength(3);
      expect(answers.find((answer) => answer.toolId === 'read_notes')?.result).toEqual({});
    },
    TIMEOUT_MS,
  );

  it(
    'asks the LLM route with curl',
    async () => {
      const answer = JSON.parse(await shell(block('/v1/chat/completions').code));

      expect(answer.choices[0].message.content).toBe('hello');
    },
    TIMEOUT_MS,
  );

  it(
    "asks it with OpenAI's SDK",
    async () => {
      const code = block("import OpenAI from 'openai'").code;
      const output = await node('openai.mjs', `${code}\nconsole.log(answer.choices[0].message.content);\n`);

      expect(output.trim()).toBe('hi');
    },
    TIMEOUT_MS,
  );

  it(
    "calls a tool over MCP with the SDK's client, and the process ends",
    async () => {
      const code = block('StreamableHTTPClientTransport').code.replace('{ ms: 2000 }', '{ ms: 20 }');
      const output = await node('mcp-client.ts', asScript(code));

      expect(output).toContain('ok');
      expect(output).toContain('result: { waitedMs: 20 }');
    },
    TIMEOUT_MS,
  );

  it(
    'embeds Bulkhead in a Nest app: callers with the key get through, others are refused',
    async () => {
      const controller = block('export class ReportsController').code.replaceAll(
        "'nestjs-bulkhead'",
        `'${PUBLIC_ENTRY}'`,
      );
      // An ESM app imports its controller's file as `.js`; this runner compiles each .ts to CommonJS on require.
      const module = block('BulkheadModule.forRoot({')
        .code.replaceAll("'nestjs-bulkhead'", `'${PUBLIC_ENTRY}'`)
        .replaceAll("'./reports.controller.js'", "'./reports.controller'");
      writeFileSync(join(WORK, 'reports.controller.ts'), controller);
      writeFileSync(join(WORK, 'app.module.ts'), module);
      const key = 'acme-key-for-the-readme-example';
      const main = `import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { AppModule } from './app.module';

(async () => {
  const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()) + '/reports/render';
  const post = (headers: Record<string, string>) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"title":"q3"}' });
  console.log('without a key', (await post({})).status);
  console.log('with the key', (await post({ authorization: 'Bearer ${key}' })).status);
  await app.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;
      const output = await node('main.ts', main, { ACME_KEY_SHA256: createHash('sha256').update(key).digest('hex') });

      expect(output).toContain('without a key 401');
      // Through authentication to the route: its renderer is not reachable from here, so the call fails there.
      expect(output).toMatch(/with the key (?!401)\d{3}/);
    },
    TIMEOUT_MS,
  );

  it('refuses a key the shipped config does not know, even though it takes callers without one', async () => {
    const answer = await fetch(`http://${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-key-of-this-config' },
      body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hi' }] }),
    });

    expect(answer.status).toBe(401);
  });

  it(
    "Claude Code's section: its config with a model server behind, each tier through its route with its key",
    async () => {
      // A loopback Anthropic-wire model server stands in for api.anthropic.com: the one change to the config.
      const upstream = await Upstream.start((request, response) => {
        const { model } = JSON.parse(request.body) as { model: string };
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify(anthropicMessage({ model, content: [{ type: 'text', text: `from ${model}` }] })));
      });
      const config = `${block('# claude-code.yaml').code.replaceAll(
        "apiKey: '${ANTHROPIC_API_KEY}'",
        `apiKey: '\${ANTHROPIC_API_KEY}', baseUrl: '${upstream.url('/v1')}'`,
      )}containment: { egress: { allowPrivateCidrs: ['127.0.0.1/32'] } }\n`;
      writeFileSync(join(WORK, 'claude-code.yaml'), config);
      // The shell block as written, but for \`claude\`: the environment Claude Code would start with.
      const launch = block('ANTHROPIC_DEFAULT_OPUS_MODEL').code.replace(/\bclaude\s*$/, 'env -0');
      const env = Object.fromEntries(
        (await run('sh', ['-c', launch], { timeout: RUN_BOUND_MS })).stdout
          .split('\0')
          .filter((entry) => entry.includes('='))
          .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
      );
      expect(env.ANTHROPIC_API_KEY).toBe('');
      expect(env.ANTHROPIC_AUTH_TOKEN).toMatch(/^[0-9a-f]{48}$/);

      const service = spawnService({
        BULKHEAD_CONFIG: join(WORK, 'claude-code.yaml'),
        PORT: '0',
        BULKHEAD_KEY_SHA256: env.BULKHEAD_KEY_SHA256,
        ANTHROPIC_API_KEY: 'sk-ant-provider-key-0123456789',
      });
      try {
        const port = await listeningPort(service);
        // Claude Code's wire: Anthropic's SDK with the token as a bearer, each tier's model as mapped.
        const claude = `import Anthropic from '@anthropic-ai/sdk';
const client = new Anthropic({
  baseURL: process.env.ANTHROPIC_BASE_URL.replace('localhost:3000', '127.0.0.1:${port}'),
  authToken: process.env.ANTHROPIC_AUTH_TOKEN,
  apiKey: process.env.ANTHROPIC_API_KEY || null,
});
const tiers = ['OPUS', 'SONNET', 'HAIKU'];
const answers = [];
for (const tier of tiers) {
  const message = await client.messages.create({
    model: process.env['ANTHROPIC_DEFAULT_' + tier + '_MODEL'],
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  });
  answers.push(message.content[0].text);
}
console.log(JSON.stringify(answers));
`;
        writeFileSync(join(WORK, 'claude-code.mjs'), claude);
        const answers = JSON.parse(await runExample(join(WORK, 'claude-code.mjs'), env, RUN_BOUND_MS));

        expect(answers).toEqual(['from claude-opus-4-6', 'from claude-sonnet-4-6', 'from claude-haiku-4-5']);
        expect(upstream.requests.map((request) => request.headers['x-api-key'])).toEqual(
          Array(3).fill('sk-ant-provider-key-0123456789'),
        );
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
        await upstream.close();
      }
    },
    TIMEOUT_MS,
  );

  it('leaves no block untested but those that say why', () => {
    const silent = [...untested].filter((candidate) => candidate.notRun === undefined);

    expect(silent.map((candidate) => candidate.code.split('\n')[0])).toEqual([]);
  });
});

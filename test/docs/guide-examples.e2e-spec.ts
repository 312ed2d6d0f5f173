import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { PlatformName } from '../../src/common/nest';
import { parseConfig } from '../../src/config';
import { PLATFORMS } from '../support/create-app';
import { listeningPort, SPAWNED_TEST_TIMEOUT_MS, spawnService, STARTUP_BOUND_MS } from '../support/spawn-service';
import { codeBlocksOf, runExample } from './code-blocks';

/**
 * The guides' code blocks: a block the README also shows is run there
 * (test/docs/readme-examples.e2e-spec.ts); a config block is validated as the service would
 * validate its file, on top of the lanes it names (`general`, `llm`) when it names none; a
 * program is run as a reader would run it; any other block says in a `<!-- not run: ... -->`
 * line why it is not run. None goes untested silently.
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
const WORK = join(ROOT, 'test/docs/.guide-examples');
const PUBLIC_ENTRY = join(ROOT, 'src/index');
/** A bound on one child run (an example, a shell block): minutes, for a loaded machine. */
const RUN_BOUND_MS = STARTUP_BOUND_MS;
/** A test starts the service or runs an example in a child: room for the child's bound and the test. */
const TIMEOUT_MS = SPAWNED_TEST_TIMEOUT_MS;

const blocks = GUIDES.flatMap((guide) =>
  codeBlocksOf(readFileSync(join(ROOT, 'docs', `${guide}.md`), 'utf8')).map((block, index) => ({
    ...block,
    name: `docs/${guide}.md, block ${index + 1} (${block.lang || 'text'})`,
  })),
);

const ran = new Set<string>();

/** The import of a platform's adapter in an example's main.ts, and the adapter it makes. */
const platformImport = (platform: PlatformName) =>
  platform === 'express'
    ? "import { ExpressAdapter } from '@nestjs/platform-express';"
    : "import { FastifyAdapter } from '@nestjs/platform-fastify';";
const platformAdapter = (platform: PlatformName) =>
  platform === 'express' ? 'new ExpressAdapter()' : 'new FastifyAdapter()';

/** The guides' block whose text contains `marker`; it counts as run. */
function block(marker: string): string {
  const found = blocks.filter((candidate) => candidate.code.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} guide blocks contain ${JSON.stringify(marker)}`);
  ran.add(found[0].code);
  return found[0].code;
}

describe("the guides' code blocks", () => {
  afterAll(() => rmSync(WORK, { recursive: true, force: true }));

  it(
    "the LLM gateway's clients, as written, against the default config: Anthropic's SDK, the Vercel AI SDK, the Agents SDK",
    async () => {
      mkdirSync(WORK, { recursive: true });
      const service = spawnService({ PORT: '0' });
      try {
        const base = `http://127.0.0.1:${await listeningPort(service)}`;
        /** The guide's block containing `marker`, pointed at this run's service, with `tail` after it. */
        const program = (name: string, marker: string, tail: string) => {
          writeFileSync(join(WORK, name), `${block(marker).replaceAll('http://localhost:3000', base)}\n${tail}\n`);
          return runExample(join(WORK, name), {}, RUN_BOUND_MS);
        };

        const [messages, anthropic, aiSdk, agents] = await Promise.all([
          program('messages.mjs', 'const client = new Anthropic(', 'console.log(JSON.stringify(message.content));'),
          program('anthropic.mjs', 'const anthropic = new Anthropic(', 'console.log(JSON.stringify(message.content));'),
          program('ai-sdk.mjs', "import { createOpenAI } from '@ai-sdk/openai'", 'console.log(text);'),
          program('agents.mjs', "from '@openai/agents'", 'console.log(result.finalOutput);'),
        ]);

        // The demo route's fake answers with the last message: each reached it as the tenant of the shipped key.
        expect(JSON.parse(messages)).toEqual([{ type: 'text', text: 'hi' }]);
        expect(JSON.parse(anthropic)).toEqual([{ type: 'text', text: 'hi from Anthropic' }]);
        expect(aiSdk.trim()).toBe('hi from the AI SDK');
        expect(agents.trim()).toBe('hi from the Agents SDK');
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
      }
    },
    TIMEOUT_MS,
  );

  it.each(PLATFORMS)(
    "embedding: the guide's app, its controller and its tools as written, on %s",
    async (platform) => {
      const work = join(WORK, `guide-app-${platform}`);
      mkdirSync(work, { recursive: true });
      // The blocks as written but for two names: the package is this repository's entry, and the
      // controller's file is imported without the `.js` an ESM app needs, since this runner
      // compiles each .ts file to CommonJS on require.
      const source = (marker: string) =>
        block(marker)
          .replaceAll("'nestjs-bulkhead'", `'${PUBLIC_ENTRY}'`)
          .replaceAll("'./reports.controller.js'", "'./reports.controller'");
      writeFileSync(join(work, 'app.module.ts'), source('providers: [CrmTools]'));
      writeFileSync(join(work, 'reports.controller.ts'), source('export class ReportsController'));
      const key = 'acme-key-for-the-guide';
      writeFileSync(
        join(work, 'main.ts'),
        `import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
${platformImport(platform)}
import { limitJsonDepth } from '${PUBLIC_ENTRY}';
import { AppModule } from './app.module';

(async () => {
  const app = await NestFactory.create(AppModule, ${platformAdapter(platform)}, { logger: false });
  app.enableShutdownHooks();
  limitJsonDepth(app);
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  const render = (headers: Record<string, string>) =>
    fetch(base + '/reports/render', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"title":"q3"}' });
  const withoutKey = await render({});
  const withKey = await render({ authorization: 'Bearer ${key}' });
  const lanes = await fetch(base + '/v1/lanes', { headers: { 'x-api-key': '${key}' } });
  console.log(JSON.stringify({ withoutKey: withoutKey.status, withKey: [withKey.status, await withKey.json()], lanes: Object.keys((await lanes.json()).lanes) }));
  await app.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`,
      );
      const env = { ACME_KEY_SHA256: createHash('sha256').update(key).digest('hex') };
      const answers = JSON.parse(await runExample(join(work, 'main.ts'), env, RUN_BOUND_MS));

      expect(answers.withoutKey).toBe(401);
      // Through the key, the lane and the breaker to TenantHttpClient: render.example.com is not reachable from here.
      expect(answers.withKey).toEqual([
        502,
        expect.objectContaining({ error: expect.objectContaining({ kind: 'transient' }) }),
      ]);
      expect(answers.lanes.sort()).toEqual(['crm', 'general', 'render']);
    },
    TIMEOUT_MS,
  );

  it.each(PLATFORMS)(
    "embedding: an app's own config and identity, through forRootAsync and a TenantResolver, on %s",
    async (platform) => {
      const work = join(WORK, `own-identity-${platform}`);
      mkdirSync(work, { recursive: true });
      const app = block('export class SessionTenantResolver').replaceAll("'nestjs-bulkhead'", `'${PUBLIC_ENTRY}'`);
      writeFileSync(join(work, 'app.module.ts'), app);
      writeFileSync(
        join(work, 'main.ts'),
        `import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
${platformImport(platform)}
import { AppModule } from './app.module';

(async () => {
  const app = await NestFactory.create(AppModule, ${platformAdapter(platform)}, { logger: false });
  await app.listen(0, '127.0.0.1');
  const lanes = (await app.getUrl()) + '/v1/lanes';
  const anonymous = await fetch(lanes);
  const signedIn = await fetch(lanes, { headers: { authorization: 'Bearer token-of-acme' } });
  const events = await fetch((await app.getUrl()) + '/v1/events', { headers: { authorization: 'Bearer token-of-acme' } });
  console.log(JSON.stringify({ anonymous: [anonymous.status, await anonymous.json()], signedIn: [signedIn.status, await signedIn.json()], events: events.status }));
  await app.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`,
      );
      const answers = JSON.parse(await runExample(join(work, 'main.ts'), {}, RUN_BOUND_MS));

      expect(answers.anonymous).toEqual([
        401,
        expect.objectContaining({ error: expect.objectContaining({ message: 'sign in first' }) }),
      ]);
      expect(answers.signedIn).toEqual([
        200,
        { lanes: { main: expect.objectContaining({ concurrency: 4, queueCapacity: 8 }) } },
      ]);
      // routes: { events: false } leaves GET /v1/events out.
      expect(answers.events).toBe(404);
    },
    TIMEOUT_MS,
  );

  const configs = blocks.filter((candidate) => candidate.lang === 'yaml' && candidate.notRun === undefined);

  it.each(configs.map((candidate) => [candidate.name, candidate]))('%s is a valid config', (_name, candidate) => {
    const document = parseYaml(candidate.code) as Record<string, unknown>;
    const result = parseConfig({ lanes: LANES, ...document }, ENV);

    expect(result.ok ? [] : result.problems).toEqual([]);
  });

  it('are each run (here or with the README), or say why not', () => {
    const silent = blocks.filter(
      (candidate) =>
        candidate.notRun === undefined &&
        candidate.lang !== 'yaml' &&
        !README_BLOCKS.has(candidate.code) &&
        !ran.has(candidate.code),
    );

    expect(silent.map((candidate) => `${candidate.name}: ${candidate.code.split('\n')[0]}`)).toEqual([]);
  });
});

// The package as a company gets it: `npm pack` (which builds first), the tarball installed into a
// fresh folder with nothing else of this repository, and two Nest apps there that import it by
// name: a plain one that answers through a @Bulkhead route, and the README's embedding example
// (its module and controller blocks as written, compiled the way the tests compile TypeScript),
// which refuses a caller without the key and lets the one with it through; and ESM apps on
// Express and on Fastify, as `nest new` makes them (see esmApp). .ci/run runs it; a
// package that packs no code, misses a dependency or fails to start fails CI.
//
//   node scripts/pack-smoke.mjs
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'bulkhead-pack-'));
const require = createRequire(import.meta.url);
const { transformSync } = require('@swc/core');
const swcOptions = require('../test/support/swc-options.js');
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

/** The README's TypeScript block that contains `marker`, as written. */
function readmeBlock(marker) {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]);
  const found = blocks.filter((block) => block.includes(marker));
  if (found.length !== 1) throw new Error(`${found.length} README blocks contain ${marker}`);
  return found[0];
}

/** TypeScript to the CommonJS the host app runs, as the tests compile it. */
function compile(code, filename) {
  return transformSync(code, { ...swcOptions, sourceMaps: false, filename }).code;
}

/** Runs `main.js` of `dir` and reads the one JSON line it prints. */
function runApp(dir, env = {}) {
  const output = execFileSync(process.execPath, ['main.js'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return JSON.parse(output);
}

// The README example's entry: boots its AppModule, then calls its route without and with the key.
const README_MAIN = `require('reflect-metadata');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { AppModule } = require('./app.module');

(async () => {
  // Quiet: the failed render (no network here) is expected.
  const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()) + '/reports/render';
  const post = (headers) =>
    fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"title":"q3"}' });
  const without = (await post({})).status;
  const withKey = (await post({ authorization: 'Bearer ' + process.env.ACME_KEY })).status;
  console.log(JSON.stringify({ without, withKey }));
  await app.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

// The host app, in plain JavaScript (decorators applied by hand), so it needs no build of its own.
const HOST_APP = `require('reflect-metadata');
const { Body, Controller, Module, Post } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { FastifyAdapter } = require('@nestjs/platform-fastify');
const { Bulkhead, BulkheadModule } = require('nestjs-bulkhead');

class ReportsController {
  render(body) {
    return { rendered: body.title };
  }
}
const render = Object.getOwnPropertyDescriptor(ReportsController.prototype, 'render');
Body()(ReportsController.prototype, 'render', 0);
Bulkhead('render')(ReportsController.prototype, 'render', render);
Post('render')(ReportsController.prototype, 'render', render);
Controller('reports')(ReportsController);

class AppModule {}
Module({
  imports: [BulkheadModule.forRoot({ lanes: { render: { concurrency: 1, queueCapacity: 1 } }, auth: { allowAnonymous: true } })],
  controllers: [ReportsController],
})(AppModule);

(async () => {
  const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  const answer = await fetch(url + '/reports/render', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"title":"q3"}',
  });
  const lanes = await (await fetch(url + '/v1/lanes')).json();
  console.log(JSON.stringify({ status: answer.status, body: await answer.json(), peak: lanes.lanes.render.peakActive }));
  await app.close();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

// A company's ESM app ("type": "module", the package imported by name), as `nest new` makes one,
// on the platform it is given: a @Bulkhead route that calls an upstream with TenantHttpClient and
// refuses a second call while its lane is full, an LLM stream, and a tool over MCP, called with
// `fetch` and the MCP SDK's client.
const esmApp = (platform) => `import 'reflect-metadata';
import { createServer } from 'node:http';
import { Controller, Inject, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ${platform === 'express' ? 'ExpressAdapter as Adapter' : 'FastifyAdapter as Adapter'} } from '@nestjs/platform-${platform}';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Bulkhead, BulkheadModule, CallSignal, TenantHttpClient } from 'nestjs-bulkhead';

// The upstream the route calls: it answers when released, so a second call finds the lane full.
let release;
const released = new Promise((resolve) => (release = resolve));
const upstream = createServer(async (request, response) => {
  await released;
  response.writeHead(200, { 'content-type': 'application/json' }).end('{"rendered":true}');
});
await new Promise((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const upstreamUrl = 'http://127.0.0.1:' + upstream.address().port + '/render';

class ReportsController {
  constructor(http) {
    this.http = http;
  }
  async render(signal) {
    const answer = await this.http.request(upstreamUrl, { method: 'POST', body: '{}', signal });
    return JSON.parse(answer.body.toString('utf8'));
  }
}
Inject(TenantHttpClient)(ReportsController, undefined, 0);
CallSignal()(ReportsController.prototype, 'render', 0);
const render = Object.getOwnPropertyDescriptor(ReportsController.prototype, 'render');
Bulkhead('render')(ReportsController.prototype, 'render', render);
Post('render')(ReportsController.prototype, 'render', render);
Controller('reports')(ReportsController);

class AppModule {}
Module({
  imports: [
    BulkheadModule.forRoot({
      auth: { allowAnonymous: true },
      lanes: { render: { concurrency: 1, queueCapacity: 0 }, main: { concurrency: 2, queueCapacity: 2 } },
      containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.0/8'] } },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
      llm: { routes: { demo: { lane: 'main', targets: [{ provider: 'fake', model: 'fake-echo' }] } } },
    }),
  ],
  controllers: [ReportsController],
})(AppModule);

const app = await NestFactory.create(AppModule, new Adapter(), { logger: ['error'] });
await app.listen(0, '127.0.0.1');
const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
const post = (path, body) =>
  fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

const first = post('/reports/render', {});
// The first call holds the lane's one slot once the upstream has it.
for (let wait = 0; wait < 600; wait++) {
  const lanes = await (await fetch(url + '/v1/lanes')).json();
  if (lanes.lanes.render.active === 1) break;
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const refused = await post('/reports/render', {});
release();
const served = await first;

const stream = await post('/v1/chat/completions', {
  model: 'demo',
  stream: true,
  messages: [{ role: 'user', content: 'hello' }],
});
const events = await stream.text();

const mcp = new Client({ name: 'pack-smoke', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(url + '/mcp')));
const tools = (await mcp.listTools()).tools.map((tool) => tool.name);
const called = await mcp.callTool({ name: 'echo', arguments: { said: 'hi' } });
await mcp.close();
console.log(
  JSON.stringify({
    served: [served.status, await served.json()],
    refused: [refused.status, (await refused.json()).error?.kind, refused.headers.get('retry-after')],
    stream: [stream.status, stream.headers.get('content-type'), events.trimEnd().endsWith('data: [DONE]')],
    tools,
    echoed: called.structuredContent?.result,
  }),
);
await app.close();
upstream.close();
`;

try {
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], ROOT))[0];
  const files = packed.files.map((file) => file.path);
  for (const needed of ['dist/index.js', 'dist/index.d.ts', 'dist/testing.js', 'README.md']) {
    if (!files.includes(needed)) throw new Error(`the tarball lacks ${needed}`);
  }
  const app = join(work, 'host-app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'host-app', private: true }));
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, packed.filename), 'reflect-metadata'], app);
  writeFileSync(join(app, 'main.js'), HOST_APP);
  const result = runApp(app);
  if (result.status !== 201 || result.body.rendered !== 'q3' || result.peak !== 1) {
    throw new Error(`the host app answered ${JSON.stringify(result)}`);
  }

  // The README's embedding example, as written: the renderer it calls is not reachable from here,
  // so a caller with the key gets through authentication to a failing upstream, not a 401.
  const readmeApp = join(app, 'readme');
  mkdirSync(readmeApp);
  writeFileSync(join(readmeApp, 'app.module.js'), compile(readmeBlock('BulkheadModule.forRoot({'), 'app.module.ts'));
  const controller = compile(readmeBlock('export class ReportsController'), 'reports.controller.ts');
  writeFileSync(join(readmeApp, 'reports.controller.js'), controller);
  writeFileSync(join(readmeApp, 'main.js'), README_MAIN);
  const key = 'acme-key-of-the-pack-smoke';
  const sha256 = createHash('sha256').update(key).digest('hex');
  const readme = runApp(readmeApp, { ACME_KEY: key, ACME_KEY_SHA256: sha256 });
  // With the key the route runs: its renderer (render.example.com) is out of reach here, which is
  // 502 transient; never a 500 (an error nothing typed).
  if (readme.without !== 401 || readme.withKey === 401 || readme.withKey === 500) {
    throw new Error(`the README's embedding example answered ${JSON.stringify(readme)}`);
  }
  // ESM apps on Express and on Fastify, in folders of their own beside the CommonJS ones.
  const expressVersion = require('@nestjs/platform-express/package.json').version;
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', `@nestjs/platform-express@${expressVersion}`], app);
  for (const platform of ['express', 'fastify']) {
    const dir = join(app, `esm-${platform}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: `esm-${platform}`, private: true, type: 'module' }),
    );
    writeFileSync(join(dir, 'main.mjs'), esmApp(platform));
    const answered = JSON.parse(
      execFileSync(process.execPath, ['main.mjs'], {
        cwd: dir,
        encoding: 'utf8',
        timeout: 60_000,
        env: { PATH: process.env.PATH ?? '' },
      }),
    );
    const fine =
      // 201: Nest's own status for a POST handler that sets none.
      answered.served[0] === 201 &&
      answered.served[1].rendered === true &&
      answered.refused[0] === 503 &&
      answered.refused[1] === 'queue_full' &&
      answered.refused[2] !== null &&
      answered.stream[0] === 200 &&
      String(answered.stream[1]).startsWith('text/event-stream') &&
      answered.stream[2] === true &&
      answered.tools.includes('echo') &&
      answered.echoed?.said === 'hi';
    if (!fine) throw new Error(`the ESM app on ${platform} answered ${JSON.stringify(answered)}`);
  }
  console.log(
    `pack-smoke ok on Node ${process.versions.node}: ${packed.filename} (${files.length} files) installed into a fresh app, which answered through ` +
      `its lane; the README's embedding example refused a caller without the key (401) and let the one with it ` +
      `through (${readme.withKey}); ESM apps on Express and on Fastify served a @Bulkhead route through TenantHttpClient, ` +
      `refused a call while its lane was full, streamed an LLM answer and answered an MCP tool call`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

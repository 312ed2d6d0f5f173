// The package as a company gets it: `npm pack` (which builds first), the tarball installed into a
// fresh folder with nothing else of this repository, and two Nest apps there that import it by
// name: a plain one that answers through a @Bulkhead route, and the README's embedding example
// (its module and controller blocks as written, compiled the way the tests compile TypeScript),
// which refuses a caller without the key and lets the one with it through; and an ESM app on
// Express with the LLM route, a tool and /mcp, called with `fetch` and the MCP SDK's client. .ci/run runs it; a
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

// A company's ESM app on Express ("type": "module", the package imported by name), as \`nest new\`
// makes one: the LLM route, a tool and /mcp mounted beside its own routes, called with \`fetch\` and
// the MCP SDK's client.
const ESM_EXPRESS_APP = `import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BulkheadModule } from 'nestjs-bulkhead';

class AppModule {}
Module({
  imports: [
    BulkheadModule.forRoot({
      auth: { allowAnonymous: true },
      lanes: { main: { concurrency: 2, queueCapacity: 2 } },
      tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
      llm: { routes: { demo: { lane: 'main', targets: [{ provider: 'fake', model: 'fake-echo' }] } } },
    }),
  ],
})(AppModule);

const app = await NestFactory.create(AppModule, new ExpressAdapter(), { logger: ['error'] });
await app.listen(0, '127.0.0.1');
const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
const chat = await fetch(url + '/v1/chat/completions', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ model: 'demo', messages: [{ role: 'user', content: 'hello' }] }),
});
const completion = await chat.json();
const mcp = new Client({ name: 'pack-smoke', version: '1.0.0' });
await mcp.connect(new StreamableHTTPClientTransport(new URL(url + '/mcp')));
const tools = (await mcp.listTools()).tools.map((tool) => tool.name);
const called = await mcp.callTool({ name: 'echo', arguments: { said: 'hi' } });
await mcp.close();
console.log(JSON.stringify({ chat: chat.status, content: completion.choices?.[0]?.message?.content, tools, echoed: called.structuredContent?.result }));
await app.close();
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
  // The ESM app on Express, in a folder of its own beside the CommonJS one (the same install).
  const esmApp = join(app, 'esm-express');
  mkdirSync(esmApp);
  const expressVersion = require('@nestjs/platform-express/package.json').version;
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', `@nestjs/platform-express@${expressVersion}`], app);
  writeFileSync(join(esmApp, 'package.json'), JSON.stringify({ name: 'esm-express', private: true, type: 'module' }));
  writeFileSync(join(esmApp, 'main.mjs'), ESM_EXPRESS_APP);
  const esm = JSON.parse(
    execFileSync(process.execPath, ['main.mjs'], {
      cwd: esmApp,
      encoding: 'utf8',
      timeout: 60_000,
      env: { PATH: process.env.PATH ?? '' },
    }),
  );
  if (esm.chat !== 200 || typeof esm.content !== 'string' || !esm.tools.includes('echo') || esm.echoed?.said !== 'hi') {
    throw new Error(`the ESM Express app answered ${JSON.stringify(esm)}`);
  }
  console.log(
    `pack-smoke ok on Node ${process.versions.node}: ${packed.filename} (${files.length} files) installed into a fresh app, which answered through ` +
      `its lane; the README's embedding example refused a caller without the key (401) and let the one with it ` +
      `through (${readme.withKey}); an ESM app on Express answered a chat completion and an MCP tool call`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

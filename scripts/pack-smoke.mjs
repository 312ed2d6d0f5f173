// The package as a company gets it: `npm pack` (which builds first), the tarball installed into a
// fresh folder with nothing else of this repository, and a Nest app there that imports it by
// name, starts, and answers through a @Bulkhead route. .ci/run runs it; a package that packs no
// code, misses a dependency or fails to start fails CI.
//
//   node scripts/pack-smoke.mjs
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(join(tmpdir(), 'bulkhead-pack-'));
const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });

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
  const result = JSON.parse(
    execFileSync(process.execPath, ['main.js'], { cwd: app, encoding: 'utf8', timeout: 60_000 }),
  );
  if (result.status !== 201 || result.body.rendered !== 'q3' || result.peak !== 1) {
    throw new Error(`the host app answered ${JSON.stringify(result)}`);
  }
  console.log(
    `pack-smoke ok: ${packed.filename} (${files.length} files) installed into a fresh app, which answered through its lane`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * `npm run bench -- overhead --platforms`: what `@Bulkhead` + `@CircuitBreaker` add to a company
 * route on each HTTP platform (issue 40, item 4). One app per platform (the built service with the
 * company routes, bench/support/bare-app.ts), each measured on the same route without the
 * decorators (`POST /bench/plain`) and with them (`POST /bench/policies`), alternated in rounds.
 * The figure is the server's CPU time per call, in µs: what the decorators add is B - A of each
 * round, which does not depend on which of the server or the load generator was the bottleneck.
 * The claim: the decorators add no more on Express than on Fastify.
 */
import { loadavg } from 'node:os';
import type { PlatformName } from '../../src/common/nest';
import { PLAIN_PATH, POLICIES_PATH, startBenchApp } from '../support/bare-app';
import { runLoad } from '../support/load';
import { fixed, printTable, writeResultsUnlessQuick } from '../support/report';
import { apiKey } from '../support/service';
import { median } from '../support/stats';
import { config } from './sides';

const PLATFORMS: readonly PlatformName[] = ['fastify', 'express'];
const BODY = JSON.stringify({ arguments: {} });
const WARM_UP_S = 0.6;

interface PlatformRun {
  platform: PlatformName;
  route: 'plain' | 'decorated';
  round: number;
  reqPerS: number;
  serverCpuUsPerCall: number;
  failed: number;
}

export async function measurePlatforms(s: {
  pairs: number;
  durationS: number;
  connections: number;
  quick: boolean;
}): Promise<string[]> {
  const key = apiKey('agent');
  const problems: string[] = [];
  const apps = await Promise.all(
    PLATFORMS.map((platform) =>
      startBenchApp('app', config(key, { kind: 'memory' }), { name: `app on ${platform}`, platform }),
    ),
  );
  try {
    const load = (url: string, durationS: number) =>
      runLoad({ url, connections: s.connections, durationS, headers: key.headers, body: BODY });
    const routes = [
      ['plain', PLAIN_PATH],
      ['decorated', POLICIES_PATH],
    ] as const;
    for (const app of apps) for (const [, path] of routes) await load(app.url(path), s.quick ? 0.3 : WARM_UP_S);

    const runs: PlatformRun[] = [];
    for (let round = 1; round <= s.pairs; round++) {
      for (const [index, platform] of PLATFORMS.entries()) {
        const app = apps[index];
        for (const [route, path] of routes) {
          const before = await app.cpuUs();
          const result = await load(app.url(path), s.durationS);
          const run: PlatformRun = {
            platform,
            route,
            round,
            reqPerS: result.reqPerS,
            serverCpuUsPerCall: ((await app.cpuUs()) - before) / result.ok,
            failed: result.non2xx + result.errors,
          };
          if (result.ok === 0 || run.failed > 0)
            problems.push(`${platform} ${route} round ${round}: ${run.failed} failed`);
          process.stdout.write(
            `  round ${round} ${platform.padEnd(7)} ${route.padEnd(9)}: ${fixed(run.reqPerS, 0)} req/s, ` +
              `${fixed(run.serverCpuUsPerCall, 1)} µs CPU/call\n`,
          );
          runs.push(run);
        }
      }
    }

    const rows = PLATFORMS.map((platform) => {
      const of = (route: PlatformRun['route']) =>
        runs.filter((run) => run.platform === platform && run.route === route);
      const plain = of('plain');
      const decorated = of('decorated');
      const added = decorated.map((run, index) => run.serverCpuUsPerCall - plain[index].serverCpuUsPerCall);
      return {
        platform,
        'plain µs/call': fixed(median(plain.map((run) => run.serverCpuUsPerCall)), 1),
        'decorated µs/call': fixed(median(decorated.map((run) => run.serverCpuUsPerCall)), 1),
        'added µs/call (median of rounds)': fixed(median(added), 1),
        'plain req/s': fixed(median(plain.map((run) => run.reqPerS)), 0),
        'decorated req/s': fixed(median(decorated.map((run) => run.reqPerS)), 0),
        added: median(added),
      };
    });
    printTable(
      `@Bulkhead + @CircuitBreaker on a company route, server CPU per call (median of ${s.pairs} rounds)`,
      rows.map(({ added: _added, ...row }) => row),
    );
    const [fastify, express] = rows;
    process.stdout.write(
      `added on express - added on fastify: ${fixed(express.added - fastify.added, 1)} µs/call ` +
        `(load average ${loadavg()
          .map((value) => value.toFixed(2))
          .join(' ')})\n`,
    );
    writeResultsUnlessQuick('overhead-platforms', s.quick, { settings: s, rows, runs, checks: { problems } });
    return problems;
  } finally {
    await Promise.all(apps.map((app) => app.stop()));
  }
}

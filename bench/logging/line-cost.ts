/**
 * What one call line costs in process, away from the noise of a loaded machine: the call log's
 * listener as the service subscribes it (Nest's `Logger`, the service's pino logger, as built
 * in dist/), per call,
 * for a success at `log` (no line), and for a written line to a file, as stdout is written
 * (asynchronously) and, for comparison, synchronously.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import pino from 'pino';
import type { CallOutcome } from '../../src/events';
import type * as Logging from '../../src/logging';
import { built } from '../support/built';
import { microBench } from '../support/micro-bench';
import { median } from '../support/stats';

const CALLS_PER_ITERATION = 1_000;

export interface LineCost {
  what: string;
  /** ns per call, median over the rounds. */
  nsPerCall: number;
}

function outcome(status: string): CallOutcome {
  return {
    callId: 'Vb3kZ0q9xQ2mN7rT-1042',
    toolId: status === 'ok' ? 'echo' : 'held',
    lane: 'tools',
    tenant: 'agent',
    pool: 'normal',
    status,
    durationMs: 0.4,
    attempts: status === 'ok' ? 1 : 0,
    replayed: false,
  };
}

/** ns per call of each case, `rounds` rounds of `timeMs` each. */
export async function measureLineCost(rounds: number, timeMs: number): Promise<LineCost[]> {
  const { CallLog, createServiceLogger } = built<typeof Logging>('logging/index.js');
  const dir = mkdtempSync(resolve(tmpdir(), 'bulkhead-bench-lines-'));
  try {
    const destination = (file: string, sync: boolean) =>
      pino.destination({ dest: resolve(dir, file), sync, maxLength: 16 * 1024 * 1024 });
    const cases = [
      {
        what: 'success at log: no line',
        logger: createServiceLogger({ level: 'log', destination: destination('quiet.log', false) }),
        status: 'ok',
      },
      {
        what: 'refusal at log: a line, asynchronous writes (as stdout)',
        logger: createServiceLogger({ level: 'log', destination: destination('async.log', false) }),
        status: 'circuit_open',
      },
      {
        what: 'refusal at log: a line, synchronous writes',
        logger: createServiceLogger({ level: 'log', destination: destination('sync.log', true) }),
        status: 'circuit_open',
      },
    ];
    const series = new Map<string, number[]>(cases.map(({ what }) => [what, []]));
    for (let round = 0; round < rounds; round++) {
      for (const { what, logger, status } of cases) {
        // As the service has it: the levels read from Nest's Logger once, lines through Nest's Logger.
        Logger.overrideLogger(logger);
        const listener = new CallLog(new Logger('Bulkhead'), {
          debug: Logger.isLevelEnabled('debug'),
          log: Logger.isLevelEnabled('log'),
          warn: Logger.isLevelEnabled('warn'),
        }).listener()!;
        const call = outcome(status);
        const bench = microBench(timeMs);
        bench.add(what, () => {
          for (let i = 0; i < CALLS_PER_ITERATION; i++) listener(call);
        });
        await bench.run();
        const result = bench.tasks[0]!.result;
        if (result.state !== 'completed') throw new Error(`${what}: ${result.state}`);
        // `period`: ms per iteration.
        series.get(what)!.push((result.period * 1e6) / CALLS_PER_ITERATION);
      }
    }
    Logger.overrideLogger(false);
    return cases.map(({ what }) => ({ what, nsPerCall: median(series.get(what)!) }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

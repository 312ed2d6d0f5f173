import 'reflect-metadata';
import { runSeed000Demo } from './seed-000.demo';
import { runSeed004Demo } from './seed-004.demo';

const print = (line: string) => process.stdout.write(`${line}\n`);

/**
 * `npm run demo`: two stories against a real service and real upstreams on loopback, each line
 * stamped with the time it happened. (Their summaries are what test/demo checks; not printed.)
 */
async function main(): Promise<void> {
  print('== Lanes: a slow renderer fills its own lane, and the notes still answer at once ==');
  await runSeed000Demo(print);
  print('\n== The LLM route: retries, the cache, a breaker, failover, a budget, a stream, a hedge ==');
  await runSeed004Demo(print);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${(error as Error).stack}\n`);
    process.exit(1);
  },
);

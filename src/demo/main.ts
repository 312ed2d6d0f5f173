import 'reflect-metadata';
import { runSeed000Demo } from './seed-000.demo';
import { runSeed004Demo } from './seed-004.demo';

const print = (line: string) => process.stdout.write(`${line}\n`);

/** `npm run demo`: the seed-000 story, then the seed-004 story, each followed by its JSON summary. */
async function main(): Promise<void> {
  print('== seed 000: lanes ==');
  print(`\n${JSON.stringify(await runSeed000Demo(print), null, 2)}`);
  print('\n== seed 004: the LLM route ==');
  print(`\n${JSON.stringify(await runSeed004Demo(print), null, 2)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${(error as Error).stack}\n`);
    process.exit(1);
  },
);

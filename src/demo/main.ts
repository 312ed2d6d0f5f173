import 'reflect-metadata';
import { runSeed000Demo } from './seed-000.demo';

/** `npm run demo`: the seed-000 story in a few seconds, then its JSON summary. */
runSeed000Demo((line) => process.stdout.write(`${line}\n`)).then(
  (summary) => {
    process.stdout.write(`\n${JSON.stringify(summary, null, 2)}\n`);
    process.exit(0);
  },
  (error: unknown) => {
    process.stderr.write(`demo failed: ${(error as Error).stack}\n`);
    process.exit(1);
  },
);

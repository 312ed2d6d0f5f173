// `npm start`: builds only when the build is missing or older than what it is built from, then
// serves dist/main.js in this same process (signals reach the service as with `node dist/main.js`).
// A compile costs 13 s on a quiet laptop and over a minute on a busy one; a restart that changed
// no source should not pay it.
//
// "What it is built from": src/ (every file and folder but the specs, which the build leaves out;
// a folder's own time changes when a file in it is added, removed or renamed), the tsconfigs,
// nest-cli.json and the package files (a dependency upgrade changes what tsc checks against).
// The build is current only if it finished: the stamp below is written after `npm run build`
// exits 0, and the build's prebuild step removes dist/ with the stamp in it.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.build-complete');
const INPUT_FILES = ['tsconfig.json', 'tsconfig.build.json', 'nest-cli.json', 'package.json', 'package-lock.json'];

/** The newest modification time (ms) under `path`: itself and, for a folder, everything in it. */
function newestUnder(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.isFile() && entry.name.endsWith('.spec.ts')) continue;
    newest = Math.max(newest, newestUnder(join(path, entry.name)));
  }
  return newest;
}

/** Why the build must run, or undefined when dist/ is current. */
function reasonToBuild() {
  if (!existsSync(STAMP)) return 'no complete build in dist/';
  const builtAt = statSync(STAMP).mtimeMs;
  const inputs = ['src', ...INPUT_FILES].map((name) => join(ROOT, name)).filter((path) => existsSync(path));
  const newer = inputs.find((path) => newestUnder(path) > builtAt);
  return newer === undefined ? undefined : `${newer.slice(ROOT.length + 1)} changed since the last build`;
}

const reason = reasonToBuild();
if (reason === undefined) {
  process.stderr.write('bulkhead: dist/ is current, starting without a build\n');
} else {
  process.stderr.write(`bulkhead: building (${reason})\n`);
  // The stamp carries the time the build began: a source saved while tsc ran is newer than it.
  const startedAt = new Date();
  try {
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
  } catch {
    // npm has shown tsc's errors; a failed build must not leave a stamp, nor start an old dist/.
    process.exit(1);
  }
  writeFileSync(STAMP, `built from the sources as they were at ${startedAt.toISOString()}\n`);
  utimesSync(STAMP, startedAt, startedAt);
}

createRequire(import.meta.url)(join(ROOT, 'dist', 'main.js'));

/**
 * The service's code as built (dist/, compiled by tsc as it ships), typed by its sources. The
 * benchmarks measure this, never src/ through swc: swc compiles class fields differently
 * (define semantics), and an object's shape is part of what a benchmark measures.
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { ROOT } from './processes';

const load = createRequire(__filename);

/** `dist/<path>`; fails with what to do when the build is missing. */
export function built<M>(path: string): M {
  try {
    return load(resolve(ROOT, 'dist', path)) as M;
  } catch (error) {
    throw new Error(`cannot load the built service (run \`npm run build\` first): ${(error as Error).message}`);
  }
}

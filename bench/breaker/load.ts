/**
 * Loads the frozen breakers of bench/breaker/frozen/ compiled by tsc with the build's own
 * options (tsconfig.build.json), as dist/ is: the benchmark compares them with the Breaker of
 * dist/, and swc (which compiles the rest of bench/) would give their class fields other
 * semantics, so other object shapes.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { ROOT } from '../support/processes';

const FROZEN_DIR = resolve(__dirname, 'frozen');

type Loader = (module: NodeJS.Module & { _compile(code: string, filename: string): void }, filename: string) => void;
const extensions = require.extensions as unknown as Record<string, Loader>;

let installed = false;

function buildOptions(): ts.CompilerOptions {
  const file = resolve(ROOT, 'tsconfig.build.json');
  const { config, error } = ts.readConfigFile(file, ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  return ts.parseJsonConfigFileContent(config, ts.sys, ROOT, undefined, file).options;
}

/** From now on, a .ts file under bench/breaker/frozen/ is compiled by tsc; any other as before. */
function install(): void {
  if (installed) return;
  installed = true;
  const options = { ...buildOptions(), sourceMap: false, inlineSourceMap: false };
  const previous = extensions['.ts']!;
  extensions['.ts'] = (module, filename) => {
    if (!filename.startsWith(FROZEN_DIR)) return previous(module, filename);
    const output = ts.transpileModule(readFileSync(filename, 'utf8'), { compilerOptions: options, fileName: filename });
    module._compile(output.outputText, filename);
  };
}

/** `bench/breaker/frozen/<name>.ts`, compiled by tsc. */
export function frozen<M>(name: string): M {
  install();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded through the hook above
  return require(resolve(FROZEN_DIR, `${name}.ts`)) as M;
}

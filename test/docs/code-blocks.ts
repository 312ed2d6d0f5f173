import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/** A fenced code block of a Markdown page. */
export interface CodeBlock {
  lang: string;
  code: string;
  /** Why it is not run, from a `<!-- not run: ... -->` line just above it. */
  notRun?: string;
}

/** The page's fenced blocks, in order, each with the `not run` reason written above it, if any. */
export function codeBlocksOf(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  for (const match of markdown.matchAll(/(?:<!-- not run: ([^>]*) -->\n\n?)?```(\w*)\n([\s\S]*?)```/g)) {
    blocks.push({ notRun: match[1], lang: match[2], code: match[3] });
  }
  return blocks;
}

const ROOT = resolve(__dirname, '../..');
const REGISTER = join(ROOT, 'test/support/swc-register.js');
const execute = promisify(execFile);

/**
 * Runs `file` with node from the repository's root, as a reader would run a block saved there
 * (TypeScript through swc, as the tests are), in an environment of `env` alone; its stdout.
 */
export async function runExample(file: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<string> {
  const args = file.endsWith('.ts') ? ['-r', REGISTER, file] : [file];
  const { stdout } = await execute(process.execPath, args, {
    cwd: ROOT,
    timeout: timeoutMs,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return stdout;
}

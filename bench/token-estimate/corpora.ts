/**
 * The texts the token-estimate benchmark sends, all read from files of this repository or its
 * locked dependencies, so every run measures the same kinds of text offline:
 *   - English: the repository's prose (README.md, docs/*.md, LICENSE), Markdown as written;
 *   - code: the TypeScript sources under src/;
 *   - CJK: TypeScript's own compiler messages in Simplified Chinese, Japanese and Korean,
 *     line by line in turn (they ship in the typescript package).
 * Each is cut to a number of UTF-8 bytes (repeated first if shorter), on a character boundary.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ROOT } from '../support/processes';

export type CorpusName = 'English' | 'code' | 'CJK';
export const CORPORA: readonly CorpusName[] = ['English', 'code', 'CJK'];

const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

function english(): string {
  const docs = readdirSync(resolve(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => read(join('docs', file)));
  return [read('README.md'), ...docs, read('LICENSE')].join('\n\n');
}

function code(): string {
  const files = (readdirSync(resolve(ROOT, 'src'), { recursive: true }) as string[])
    .filter((file) => file.endsWith('.ts'))
    .sort();
  return files.map((file) => read(join('src', file))).join('\n');
}

function cjk(): string {
  const messages = ['zh-cn', 'ja', 'ko'].map((locale) =>
    Object.values(
      JSON.parse(read(`node_modules/typescript/lib/${locale}/diagnosticMessages.generated.json`)) as Record<
        string,
        string
      >,
    ),
  );
  const lines: string[] = [];
  for (let i = 0; i < Math.max(...messages.map((list) => list.length)); i++) {
    for (const list of messages) if (list[i] !== undefined) lines.push(list[i]!);
  }
  return lines.join('\n');
}

const SOURCES: Record<CorpusName, () => string> = { English: english, code, CJK: cjk };

/** `bytes` of UTF-8 of the corpus, cut before a character that would not fit whole. */
export function corpus(name: CorpusName, bytes: number): string {
  const source = Buffer.from(SOURCES[name]());
  const repeated = Buffer.alloc(bytes + 4);
  for (let at = 0; at < repeated.length; at += source.length) source.copy(repeated, at);
  let end = bytes;
  // A UTF-8 continuation byte (10xxxxxx) means the cut would split a character.
  while (end > 0 && (repeated[end]! & 0xc0) === 0x80) end--;
  return repeated.subarray(0, end).toString('utf8');
}

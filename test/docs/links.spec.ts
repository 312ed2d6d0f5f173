import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, resolve } from 'node:path';

/**
 * The README is a front page and the guides in docs/ hold the rest: every link between them (a
 * file, and a heading within it) must lead somewhere, so a section that moves takes its links
 * along.
 */
const ROOT = resolve(__dirname, '../..');
const PAGES = ['README.md', 'BENCHMARKS.md', ...readdirSync(join(ROOT, 'docs')).map((file) => `docs/${file}`)].filter(
  (page) => page.endsWith('.md'),
);
const FRONT_PAGE_MAX_LINES = 300;

/** GitHub's anchor of a heading: lower case, punctuation but hyphens dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a page's headings, outside code blocks. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading && !fenced) anchors.add(anchorOf(heading[1]));
  }
  return anchors;
}

/** `[text](target)` links that stay in this repository, outside code blocks. */
function localLinks(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('the README and the guides', () => {
  const texts = new Map(PAGES.map((page) => [page, readFileSync(join(ROOT, page), 'utf8')]));
  const anchors = new Map(PAGES.map((page) => [page, anchorsOf(texts.get(page)!)]));

  it.each(PAGES)('%s: every link leads to a file that exists, and to a heading it has', (page) => {
    const broken: string[] = [];
    for (const target of localLinks(texts.get(page)!)) {
      const [path, anchor] = target.split('#');
      const file = path === '' ? page : normalize(relative(ROOT, join(ROOT, dirname(page), path)));
      if (!existsSync(join(ROOT, file))) broken.push(`${target}: no file ${file}`);
      else if (anchor !== undefined && anchors.has(file) && !anchors.get(file)!.has(anchor)) {
        broken.push(`${target}: ${file} has no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it(`keeps the README a front page: at most ${FRONT_PAGE_MAX_LINES} lines, with a guide for each task`, () => {
    const readme = texts.get('README.md')!;

    expect(readme.split('\n').length).toBeLessThanOrEqual(FRONT_PAGE_MAX_LINES);
    for (const guide of ['getting-started', 'llm-gateway', 'mcp', 'embedding', 'configuration', 'operations']) {
      expect(readme).toContain(`(docs/${guide}.md)`);
    }
  });
});

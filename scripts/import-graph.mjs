// The import graph between the folders of src/, drawn from the code: a Mermaid flowchart of the
// layers of scripts/folder-layers.cjs, each arrow a folder importing another, with the arrows that a
// longer path already implies left out (a transitive reduction), so the layering stays readable.
//
//   node scripts/import-graph.mjs           prints it
//   node scripts/import-graph.mjs --check   fails when docs/design.md does not show it (npm run lint)
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { LAYERS } = require('./folder-layers.cjs');
const DOC = 'docs/design.md';
const START = '<!-- import-graph:start (npm run import-graph) -->';
const END = '<!-- import-graph:end -->';

function folderEdges() {
  const json = execFileSync(
    'npx',
    [
      'depcruise',
      'src',
      '--config',
      '.dependency-cruiser.cjs',
      '--output-type',
      'json',
      '--include-only',
      '^src/[^/]+/',
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const folderOf = (path) => path.split('/')[1];
  const edges = new Map();
  for (const module of JSON.parse(json).modules) {
    if (/\.(spec|contract)\.ts$/.test(module.source)) continue;
    const from = folderOf(module.source);
    for (const dependency of module.dependencies) {
      const to = folderOf(dependency.resolved);
      if (to === from || !dependency.resolved.startsWith('src/')) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(to);
    }
  }
  return edges;
}

/** Drops a → c when a reaches c through another folder. */
function reduce(edges) {
  const reaches = (from, to, skip) => {
    const seen = new Set();
    const stack = [...(edges.get(from) ?? [])].filter((next) => next !== skip);
    while (stack.length > 0) {
      const at = stack.pop();
      if (at === to) return true;
      if (seen.has(at)) continue;
      seen.add(at);
      stack.push(...(edges.get(at) ?? []));
    }
    return false;
  };
  const kept = [];
  for (const [from, tos] of edges) {
    for (const to of tos) if (!reaches(from, to, to)) kept.push([from, to]);
  }
  return kept.sort((a, b) => a.join().localeCompare(b.join()));
}

function mermaid() {
  const id = (folder) => folder.replace(/-/g, '_');
  const lines = ['```mermaid', 'flowchart BT'];
  for (const layer of LAYERS) {
    lines.push(`  subgraph ${id(layer.name.replace(/ /g, '_'))}["${layer.name}"]`);
    for (const folder of layer.folders) lines.push(`    ${id(folder)}[${folder}]`);
    lines.push('  end');
  }
  for (const [from, to] of reduce(folderEdges())) lines.push(`  ${id(from)} --> ${id(to)}`);
  lines.push('```');
  return lines.join('\n');
}

const graph = mermaid();
if (process.argv.includes('--check')) {
  const doc = readFileSync(DOC, 'utf8');
  const shown = doc.slice(doc.indexOf(START) + START.length, doc.indexOf(END)).trim();
  if (doc.indexOf(START) < 0 || shown !== graph) {
    console.error(
      `${DOC}: the import graph is not the one the code draws; put this between the import-graph markers:\n`,
    );
    console.error(graph);
    process.exit(1);
  }
} else {
  console.log(graph);
}

// The import rules of src/ (`npm run lint` runs them; docs/design.md, "How the code is layered").
//
// Every folder under src/ has a place in LAYERS (scripts/folder-layers.cjs), bottom to top, and
// imports only folders placed below it: an order of the folders that every import follows, so no
// two folders can import each other through any path. Inside a layer the order is one the
// imports allow (two folders that do not import each other may swap). Between folders, a folder
// is imported through its index. Nested folders (src/llm/routing) may not form circles either.

const { LAYERS } = require('./scripts/folder-layers.cjs');

const ORDER = LAYERS.flatMap((layer) => layer.folders.map((folder) => ({ folder, layer: layer.name })));
const anyOf = (names) => `^src/(${names.join('|')})/`;

/** One rule per folder: nothing placed above it. */
const orderRules = ORDER.slice(0, -1).map(({ folder, layer }, index) => ({
  name: `below-${folder}`,
  comment: `src/${folder} (${layer}) imports only folders placed below it in scripts/folder-layers.cjs`,
  severity: 'error',
  from: { path: `^src/${folder}/` },
  to: { path: anyOf(ORDER.slice(index + 1).map((above) => above.folder)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-file-circle',
      comment: 'files that import each other, through any path (type imports too)',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-circle',
      comment: 'folders, nested ones too (src/llm/routing, src/llm/providers), that import each other through any path',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
    ...orderRules,
    {
      name: 'folder-in-a-layer',
      comment: 'every folder under src/ has its place in LAYERS of scripts/folder-layers.cjs',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: anyOf(ORDER.map(({ folder }) => folder)) },
      to: {},
    },
    {
      name: 'through-the-index',
      comment: "another folder is imported through its index.ts, the folder's public face",
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/$1/', '/index\\.ts$', '^src/common/fake-clock\\.ts$'],
      },
    },
    {
      name: 'umbrella-on-top',
      comment:
        'the files directly in src/ (BulkheadModule, the service, the public entry) import; nothing imports them but the demo and the example (the public entry, as an app would)',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: '^src/(demo|example)/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Tests may import anything they test, from any folder.
    exclude: { path: ['^(node_modules|dist|test|bench)/', '\\.(spec|e2e-spec)\\.ts$'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'] },
  },
};

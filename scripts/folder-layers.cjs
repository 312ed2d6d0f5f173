// Where each folder of src/ sits, for .dependency-cruiser.cjs (the rules) and
// scripts/import-graph.mjs (the drawing in docs/design.md).

/** Bottom to top; in each layer, its folders bottom to top. */
const LAYERS = [
  { name: 'foundation', folders: ['common', 'events'] },
  {
    name: 'mechanisms',
    folders: [
      'auth',
      'bulkhead',
      'overload',
      'retry',
      'circuit-breaker',
      'store',
      'lifecycle',
      'rate-limit',
      'budget',
      'idempotency',
      'containment',
      'mcp-client',
      'mcp-pinning',
    ],
  },
  // The steps a call goes through, composed from the mechanisms, assembled by each path above.
  { name: 'steps', folders: ['pipeline'] },
  { name: 'features', folders: ['llm', 'dispatch'] },
  {
    name: 'around the features',
    folders: ['chaos', 'mcp', 'route-policies', 'openapi', 'health', 'logging', 'metrics'],
  },
  // The config file composes the options every folder below owns (each its schema and defaults), and checks what spans sections.
  { name: 'configuration', folders: ['config'] },
  { name: 'apps', folders: ['example', 'demo', 'warm-up'] },
];

module.exports = { LAYERS };

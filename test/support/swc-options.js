// How TypeScript is compiled for tests: by Jest, and by child processes running src/main.ts.
// Decorator metadata is what Nest's dependency injection reads.
module.exports = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: 'es2024',
  },
  module: { type: 'commonjs' },
  sourceMaps: 'inline',
};

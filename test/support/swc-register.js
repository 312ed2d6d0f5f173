// Lets a child process run the TypeScript sources directly (node -r ./swc-register.js src/main.ts),
// compiled by swc the way Jest compiles them, so process-level tests need no build first.
const { transformSync } = require('@swc/core');
const { readFileSync } = require('node:fs');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), {
    filename,
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};

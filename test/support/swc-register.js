// Lets a child process run the TypeScript sources directly (node -r ./swc-register.js src/main.ts),
// compiled by swc the way Jest compiles them, so process-level tests need no build first.
const { transformSync } = require('@swc/core');
const { readFileSync } = require('node:fs');
const swcOptions = require('./swc-options');

require.extensions['.ts'] = (module, filename) => {
  const { code } = transformSync(readFileSync(filename, 'utf8'), { ...swcOptions, filename });
  module._compile(code, filename);
};

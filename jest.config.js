/** @type {import('jest').Config} */
const swc = ['@swc/jest', require('./test/support/swc-options')];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  // NestJS 12 and some of its dependencies are ESM-only; Jest on Node 20 cannot load ESM,
  // so everything, node_modules included, goes through swc to CommonJS (PITFALLS.md 7).
  transform: { '^.+\\.(t|j|mj|cj)s$': swc },
  transformIgnorePatterns: [],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testTimeout: 20000,
};

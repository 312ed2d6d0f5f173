/** @type {import('jest').Config} */
const swc = ['@swc/jest', require('./test/support/swc-options')];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/src', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
  // NestJS 12 and some of its dependencies are ESM-only; Jest's CommonJS runtime cannot load ESM,
  // so everything, node_modules included, goes through swc to CommonJS.
  transform: { '^.+\\.(t|j|mj|cj)s$': swc },
  transformIgnorePatterns: [],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
  testTimeout: 20000,
  // The run's Redis: REDIS_URL if it answers, else a redis-server started for the run, else the
  // Redis suites are skipped and the run ends with one line saying so (test/support/redis-*).
  globalSetup: '<rootDir>/test/support/redis-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/redis-global-teardown.ts',
  testResultsProcessor: '<rootDir>/test/support/redis-skip-report.js',
};

/** @type {import('jest').Config} */
const { availableParallelism } = require('node:os');
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
  // Generous: a loaded laptop (load 10 on 2 cores) stalls a test for seconds; a passing test never waits for it.
  testTimeout: 60000,
  // Jest's default is one worker fewer than the cores: one on a 2-core machine, the whole suite in
  // a row. Most suites wait on loopback sockets, Redis and child processes rather than the CPU, and
  // every one is safe beside the others (its own ports, servers and Redis keys), so one worker more
  // than the cores keeps them busy: on 2 cores 3 workers run the suite in 2.5 min instead of 7
  // (4 in 2 min, at more risk of a slow moment on a shared machine). At most 8, for memory.
  maxWorkers: Math.min(8, availableParallelism() + 1),
  // The run's Redis: REDIS_URL if it answers, else a redis-server started for the run, else the
  // Redis suites are skipped and the run ends with one line saying so (test/support/redis-*).
  globalSetup: '<rootDir>/test/support/redis-global-setup.ts',
  globalTeardown: '<rootDir>/test/support/redis-global-teardown.ts',
  testResultsProcessor: '<rootDir>/test/support/redis-skip-report.js',
};

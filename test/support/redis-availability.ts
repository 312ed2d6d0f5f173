/**
 * Suites that run only where the test run has Redis. The global setup (redis-global-setup.ts)
 * finds out before any worker starts and says so in these variables; a run without that setup
 * sets none of them, and every suite runs. A skipped suite carries {@link SKIPPED_FOR_REDIS} in
 * its title, so that redis-skip-report.js can count its tests in the one line it prints.
 */

/** Set to why no Redis answers at REDIS_URL for this run; unset when one does. */
export const NO_REDIS_ENV = 'BULKHEAD_NO_REDIS';
/** Set to why no private redis-server can be started (none on PATH); unset when one can. */
export const NO_REDIS_SERVER_ENV = 'BULKHEAD_NO_REDIS_SERVER';
/** Set to 1 (CI does): a Redis suite that cannot run fails the run instead of being skipped. */
export const REQUIRE_REDIS_ENV = 'BULKHEAD_REQUIRE_REDIS';
/** Ends the title of a skipped Redis suite or test (redis-skip-report.js looks for it). */
export const SKIPPED_FOR_REDIS = '[skipped: no Redis]';

type Body = () => void;
type TestFn = (name: string, fn: jest.ProvidesCallback, timeout?: number) => void;

const lacks = (env: string): boolean => Boolean(process.env[env]);

function describeUnless(env: string, name: string, body: Body): void {
  if (lacks(env)) describe.skip(`${name} ${SKIPPED_FOR_REDIS}`, body);
  else describe(name, body);
}

/** A describe block on the run's Redis (REDIS_URL): skipped when there is none. */
export function describeRedis(name: string, body: Body): void {
  describeUnless(NO_REDIS_ENV, name, body);
}

/** A test on the run's Redis (REDIS_URL), among tests that need none: skipped when there is none. */
export const itRedis: TestFn = (name, fn, timeout) => {
  if (lacks(NO_REDIS_ENV)) it.skip(`${name} ${SKIPPED_FOR_REDIS}`, fn, timeout);
  else it(name, fn, timeout);
};

/** A describe block that starts redis-servers of its own (PrivateRedis): skipped without redis-server on PATH. */
export function describeRedisServer(name: string, body: Body): void {
  describeUnless(NO_REDIS_SERVER_ENV, name, body);
}

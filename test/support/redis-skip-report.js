// Jest's testResultsProcessor: ends a run whose Redis suites were skipped with one line, how
// many suites and tests and why (what the global setup found), and hands the results on as
// they are. Jest loads it without transforming it, so it is plain JavaScript and repeats three
// names of redis-availability.ts: keep them equal.
const SKIPPED_FOR_REDIS = '[skipped: no Redis]';
const NO_REDIS_ENV = 'BULKHEAD_NO_REDIS';
const NO_REDIS_SERVER_ENV = 'BULKHEAD_NO_REDIS_SERVER';

function reportRedisSkips(results) {
  const files = new Set();
  let tests = 0;
  for (const file of results.testResults) {
    for (const test of file.testResults) {
      const skipped = test.status === 'pending' || test.status === 'skipped';
      if (skipped && [...test.ancestorTitles, test.title].some((title) => title.endsWith(SKIPPED_FOR_REDIS))) {
        tests += 1;
        files.add(file.testFilePath);
      }
    }
  }
  if (tests > 0) {
    const why = process.env[NO_REDIS_ENV] || process.env[NO_REDIS_SERVER_ENV] || 'no Redis';
    const suites = `${files.size} Redis suite${files.size === 1 ? '' : 's'}`;
    const line = `bulkhead: ${suites} (${tests} test${tests === 1 ? '' : 's'}) skipped: ${why}`;
    process.stderr.write(process.stderr.isTTY ? `\x1b[1;33m${line}\x1b[0m\n` : `${line}\n`);
  }
  return results;
}

module.exports = reportRedisSkips;

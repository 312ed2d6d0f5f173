import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
// What a company that writes its own store imports: the interface from the package's main entry,
// the contract from its testing entry (`nestjs-bulkhead/testing`), and nothing deeper.
import { type Clock, MemoryRateLimitStore, RateLimitStore } from '../../src/index';
import { describeRateLimitStore } from '../../src/testing';

const ROOT = resolve(__dirname, '../..');

/**
 * A company's rate-limit store: every decision answers a promise a turn later, as a store over
 * the network would, and lands on buckets of its own (here a memory store under a key prefix).
 */
class CompanyRateLimitStore implements RateLimitStore {
  private readonly buckets: MemoryRateLimitStore;

  constructor(clock: Clock) {
    this.buckets = new MemoryRateLimitStore(clock);
  }

  async take(...[key, rules, amounts]: Parameters<RateLimitStore['take']>) {
    await Promise.resolve();
    return this.buckets.take(`company:${key}`, rules, amounts);
  }

  async adjust(...[key, rules, amounts]: Parameters<RateLimitStore['adjust']>) {
    await Promise.resolve();
    return this.buckets.adjust(`company:${key}`, rules, amounts);
  }
}

describeRateLimitStore(
  'a company store behind the RateLimitStore interface',
  (clock) => new CompanyRateLimitStore(clock),
);

describe('the testing entry', () => {
  // The suites call jest's globals: an app that imports the main entry must not load one.
  it('stays out of what the main entry loads', () => {
    const loaded = execFileSync(
      process.execPath,
      [
        '-r',
        resolve(ROOT, 'test/support/swc-register.js'),
        '-e',
        `require(${JSON.stringify(resolve(ROOT, 'src/index.ts'))});
         process.stdout.write(JSON.stringify(Object.keys(require.cache)));`,
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );

    const modules = JSON.parse(loaded) as string[];
    expect(modules).toContain(resolve(ROOT, 'src/index.ts'));
    expect(modules.filter((path) => /\.contract\.ts$|[/\\]src[/\\]testing\.ts$/.test(path))).toEqual([]);
  });
});

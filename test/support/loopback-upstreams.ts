import type { HttpPool } from '../../src/containment/http-pool';
import { loopbackPool } from './provider-attempt';
import { Upstream, type UpstreamHandler } from './upstream';

/** The loopback servers of one provider spec, and the pool that reaches them. */
export interface LoopbackUpstreams {
  /** The running test's pool: a {@link loopbackPool} made before each test and closed after it. */
  readonly pool: HttpPool;
  /** Starts a recording server answering with `handler`, closed after the test. */
  upstream(handler: UpstreamHandler): Promise<Upstream>;
}

/**
 * Registers the jest hooks a provider spec against real servers on 127.0.0.1 needs: a fresh
 * pool before each test; after it, every server the test started closed, then the pool.
 */
export function loopbackUpstreams(): LoopbackUpstreams {
  const started: Upstream[] = [];
  let pool: HttpPool | undefined;

  beforeEach(() => {
    pool = loopbackPool();
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((upstream) => upstream.close()));
    await pool?.close();
  });

  return {
    get pool(): HttpPool {
      if (!pool) throw new Error('the loopback pool exists only while a test runs');
      return pool;
    },
    async upstream(handler: UpstreamHandler): Promise<Upstream> {
      const upstream = await Upstream.start(handler);
      started.push(upstream);
      return upstream;
    },
  };
}

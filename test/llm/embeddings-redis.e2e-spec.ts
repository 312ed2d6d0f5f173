import { createTestApp, type TestApp } from '../support/create-app';
import { embeddingsUpstream, vectorOf } from '../support/embeddings-upstream';
import { send } from '../support/http-client';
import { closeRedis, connectRedis, deleteKeysUnder, SHARED_REDIS_URL, uniquePrefix } from '../support/redis';
import { describeRedis } from '../support/redis-availability';
import { testTenant } from '../support/tenants';
import { Upstream } from '../support/upstream';

const ACME = testTenant('acme');
const BETA = testTenant('beta');

describeRedis('embeddings on two replicas sharing Redis', () => {
  let upstream: Upstream;
  let replicas: TestApp[] = [];
  let prefix: string;

  beforeEach(async () => {
    prefix = uniquePrefix('bh-embed');
    upstream = await Upstream.start(embeddingsUpstream('embed-primary'));
  });

  afterEach(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    replicas = [];
    await upstream.close();
    const redis = await connectRedis();
    await deleteKeysUnder(redis, prefix);
    await closeRedis(redis);
  });

  it('serve one exact cache: an answer stored by one is a hit on the other, for the same tenant only', async () => {
    const document = {
      auth: { apiKeys: [ACME.apiKey, BETA.apiKey] },
      store: { kind: 'redis', url: SHARED_REDIS_URL, prefix, commandTimeoutMs: 2_000 },
      lanes: { llm: { concurrency: 4, queueCapacity: 4 } },
      llm: {
        routes: {
          embed: {
            lane: 'llm',
            targets: [{ provider: 'openai', model: 'embed-primary', baseUrl: upstream.url('/v1') }],
          },
        },
      },
    };
    replicas = [await createTestApp(document), await createTestApp(document)];
    const request = { model: 'embed', input: ['shared text', 'and another'], encoding_format: 'base64' };
    const post = (replica: TestApp, tenant = ACME) =>
      send('POST', `${replica.url}/v1/embeddings`, { json: request, headers: tenant.headers });

    const stored = await post(replicas[0]);
    const hit = await post(replicas[1]);
    const otherTenant = await post(replicas[1], BETA);

    expect([stored, hit, otherTenant].map((answer) => answer.headers['x-bulkhead-cache'])).toEqual([
      'miss',
      'hit',
      'miss',
    ]);
    expect(hit.body.data).toEqual(stored.body.data);
    const decoded = Buffer.from(hit.body.data[0].embedding as string, 'base64');
    expect(Array.from(new Float32Array(decoded.buffer, decoded.byteOffset, decoded.length / 4))).toEqual(
      vectorOf('shared text', 8),
    );
    expect(upstream.requests).toHaveLength(2);
  });
});

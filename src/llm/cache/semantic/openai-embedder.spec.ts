import { ResilienceError } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import type { PoolName } from '../../../containment/containment-decision';
import { EgressPolicy } from '../../../containment/egress';
import { HttpPool } from '../../../containment/http-pool';
import { eventually } from '../../../../test/support/eventually';
import { loopbackUpstreams } from '../../../../test/support/loopback-upstreams';
import { rejection } from '../../../../test/support/rejection';
import { hang, json, type Upstream } from '../../../../test/support/upstream';
import { cosineSimilarity } from './embedder';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder';

const API_KEY = 'sk-embed-7c1e0a9f3b';
const SECRET_QUESTION = 'What is the launch date of Project Nightingale?';
const TIMEOUT_MS = 2_000;

const clock = new FakeClock();
const loopback = loopbackUpstreams();
const { upstream } = loopback;

function embedderFor(server: Upstream, options: Partial<OpenAiEmbedderOptions> = {}): OpenAiEmbedder {
  return new OpenAiEmbedder(
    { baseUrl: server.url('/v1'), apiKey: API_KEY, model: 'text-embedding-3-small', timeoutMs: TIMEOUT_MS, ...options },
    clock,
  );
}

/** An OpenAI embeddings answer with one item per vector, `index` in order unless given. */
function embeddings(vectors: number[][], indexes = vectors.map((_vector, index) => index)) {
  return {
    object: 'list',
    data: vectors.map((embedding, position) => ({ object: 'embedding', index: indexes[position], embedding })),
    model: 'text-embedding-3-small',
    usage: { prompt_tokens: 8, total_tokens: 8 },
  };
}

describe('OpenAiEmbedder', () => {
  describe('the request', () => {
    it('posts the model, the texts and float encoding to {baseUrl}/embeddings with the bearer key', async () => {
      const server = await upstream(json(200, embeddings([[1, 0, 0]])));

      await embedderFor(server).embed(['Hello'], loopback.pool);

      expect(server.requests).toHaveLength(1);
      const [request] = server.requests;
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/embeddings');
      expect(request.headers.authorization).toBe(`Bearer ${API_KEY}`);
      expect(request.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request.body)).toEqual({
        model: 'text-embedding-3-small',
        input: ['Hello'],
        encoding_format: 'float',
      });
    });

    it('asks for the configured dimensions', async () => {
      const server = await upstream(json(200, embeddings([[1, 0]])));

      await embedderFor(server, { dimensions: 2 }).embed(['Hello'], loopback.pool);

      expect(JSON.parse(server.requests[0].body)).toMatchObject({ dimensions: 2 });
    });

    it('sends no authorization header without a key, and joins a base URL ending in a slash', async () => {
      const server = await upstream(json(200, embeddings([[1, 0]])));

      await embedderFor(server, { apiKey: '', baseUrl: server.url('/v1/') }).embed(['Hello'], loopback.pool);

      expect(server.requests[0].headers.authorization).toBeUndefined();
      expect(server.requests[0].path).toBe('/v1/embeddings');
    });

    it('sends nothing for no texts', async () => {
      const server = await upstream(json(200, embeddings([])));

      await expect(embedderFor(server).embed([], loopback.pool)).resolves.toEqual([]);
      expect(server.requests).toHaveLength(0);
    });

    it('names its vector space by base URL, model and dimensions, never by key', () => {
      const at = (options: Partial<OpenAiEmbedderOptions>) =>
        new OpenAiEmbedder({ model: 'm', timeoutMs: 1, baseUrl: 'http://a/v1', ...options }, clock).id;

      expect(at({})).toBe(at({ apiKey: 'sk-other' }));
      expect(at({})).not.toBe(at({ model: 'n' }));
      expect(at({})).not.toBe(at({ baseUrl: 'http://b/v1' }));
      expect(at({})).not.toBe(at({ dimensions: 256 }));
      expect(at({ apiKey: API_KEY })).not.toContain(API_KEY);
    });
  });

  describe('the answer', () => {
    it('gives unit vectors, in the order of the texts whatever order the items come in', async () => {
      const server = await upstream(
        json(
          200,
          embeddings(
            [
              [0, 3, 4],
              [2, 0, 0],
            ],
            [1, 0],
          ),
        ),
      );

      const [first, second] = await embedderFor(server).embed(['a', 'b'], loopback.pool);

      expect([...first]).toEqual([1, 0, 0]);
      expect([...second].map((value) => Number(value.toFixed(6)))).toEqual([0, 0.6, 0.8]);
      expect(cosineSimilarity(second, second)).toBeCloseTo(1, 6);
    });

    it.each<[string, unknown]>([
      ['not JSON', 'not json'],
      ['fewer embeddings than texts', embeddings([])],
      ['an embedding that is not numbers', embeddings([['0.1', '0.2'] as unknown as number[]])],
      ['an empty embedding', embeddings([[]])],
      ['an all-zero embedding', embeddings([[0, 0]])],
      ['indexes that repeat', embeddings([[1], [1]], [0, 0])],
    ])('fails as transient for an answer with %s', async (_label, body) => {
      const server = await upstream((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
      const texts = (body as { data?: unknown[] }).data?.length === 2 ? ['a', 'b'] : ['a'];

      const error = await rejection(embedderFor(server).embed(texts, loopback.pool));

      expect(error).toBeInstanceOf(ResilienceError);
      expect(error).toMatchObject({ kind: 'transient' });
    });

    it('fails an embedding of other dimensions than configured', async () => {
      const server = await upstream(json(200, embeddings([[1, 0, 0]])));

      const error = await rejection(embedderFor(server, { dimensions: 2 }).embed(['a'], loopback.pool));

      expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('3 dimensions, not 2') });
    });
  });

  describe('failures', () => {
    it.each<[number, string]>([
      [429, 'transient'],
      [500, 'transient'],
      [503, 'transient'],
      [401, 'unavailable'],
      [404, 'unavailable'],
      [400, 'unavailable'],
    ])('fails a %i answer as %s, never quoting the body, the text or the key', async (status, kind) => {
      const server = await upstream(
        json(status, { error: { message: `Invalid input: "${SECRET_QUESTION}" for key ${API_KEY}` } }),
      );

      const error = await rejection(embedderFor(server).embed([SECRET_QUESTION], loopback.pool));

      expect(error).toBeInstanceOf(ResilienceError);
      expect(error).toMatchObject({ kind, message: expect.stringContaining(`answered ${status}`) });
      expect(error.message).not.toContain('Nightingale');
      expect(error.message).not.toContain(API_KEY);
    });

    it('fails as transient when the endpoint cannot be reached, naming no address', async () => {
      const server = await upstream(json(200, embeddings([[1]])));
      const closed = embedderFor(server);
      const { port } = server;
      await server.close();

      const error = await rejection(closed.embed(['a'], loopback.pool));

      expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('could not be reached') });
      expect(error.message).not.toContain(String(port));
    });

    it('goes through the pool: a destination the egress rules deny is refused before any connection', async () => {
      const server = await upstream(json(200, embeddings([[1]])));
      const strict = new HttpPool(
        { name: 'isolated' as PoolName, maxConcurrency: 1, timeoutMs: 5_000, pooledConnectionLifetimeMs: 60_000 },
        new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: [] }),
        clock,
      );

      try {
        const error = await rejection(embedderFor(server).embed(['a'], strict));

        expect(error).toMatchObject({ kind: 'egress_denied' });
        expect(server.requests).toHaveLength(0);
      } finally {
        await strict.close();
      }
    });

    it('fails as timeout once timeoutMs of the clock has passed, and drops the request', async () => {
      const server = await upstream(hang);
      const embedded = rejection(embedderFor(server).embed(['a'], loopback.pool));
      await eventually(() => expect(server.requests).toHaveLength(1));

      clock.advance(TIMEOUT_MS - 1);
      await Promise.resolve();
      expect(server.abandoned).toBe(0);
      clock.advance(1);

      const error = await embedded;
      expect(error).toMatchObject({ kind: 'timeout', message: expect.stringContaining(`${TIMEOUT_MS} ms`) });
      await eventually(() => expect(server.abandoned).toBe(1));
    });

    it('stops when the caller aborts, with the caller’s reason', async () => {
      const server = await upstream(hang);
      const caller = new AbortController();
      const embedded = rejection(embedderFor(server).embed(['a'], loopback.pool, caller.signal));
      await eventually(() => expect(server.requests).toHaveLength(1));

      const reason = new ResilienceError('stopped', 'the client left');
      caller.abort(reason);

      await expect(embedded).resolves.toBe(reason);
      await eventually(() => expect(server.abandoned).toBe(1));
    });

    it('sends nothing for a caller that has already left', async () => {
      const server = await upstream(json(200, embeddings([[1]])));
      const reason = new ResilienceError('stopped', 'gone');

      await expect(rejection(embedderFor(server).embed(['a'], loopback.pool, AbortSignal.abort(reason)))).resolves.toBe(
        reason,
      );
      expect(server.requests).toHaveLength(0);
    });
  });

  it.each([0, -1, 1.5])('refuses a timeoutMs of %p with a RangeError', (timeoutMs) => {
    expect(() => new OpenAiEmbedder({ model: 'm', timeoutMs }, clock)).toThrow(RangeError);
  });
});

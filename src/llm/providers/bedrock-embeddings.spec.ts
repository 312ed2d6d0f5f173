import { LazyAbortController } from '../../common';
import { FakeClock } from '../../common/fake-clock';
import { loopbackUpstreams } from '../../../test/support/loopback-upstreams';
import { attemptHttp } from '../../../test/support/provider-attempt';
import { rejection } from '../../../test/support/rejection';
import { json, type Upstream } from '../../../test/support/upstream';
import { bedrockEmbeddingFamily, type EmbeddingsRequest } from '../wire';
import type { Environment } from './bedrock-credentials';
import { BedrockProvider } from './bedrock.provider';
import type { EmbeddingAttempt } from './llm-provider';
import { isProviderFailure } from './provider-errors';

const KEYS: Environment = { AWS_ACCESS_KEY_ID: 'AKIATESTBEDROCK0001', AWS_SECRET_ACCESS_KEY: 'secret-0001' };
const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';
const clock = new FakeClock(Date.UTC(2026, 4, 1, 12, 0, 0));

const loopback = loopbackUpstreams();
const provider = new BedrockProvider(clock, KEYS);

function attempt(server: Upstream, model: string, request: Partial<EmbeddingsRequest>): EmbeddingAttempt {
  const abort = new LazyAbortController();
  return {
    target: { provider: 'bedrock', model, region: 'eu-west-3', baseUrl: server.url() },
    request: { model, input: 'x', ...request },
    http: attemptHttp(loopback.pool, abort),
    signal: abort.signal,
    timeoutMs: 10_000,
  };
}

const sent = (server: Upstream) => server.requests.map((request) => JSON.parse(request.body) as unknown);

describe('bedrockEmbeddingFamily', () => {
  it('knows Titan and Cohere embeddings by their ids, behind a region prefix or in an ARN too', () => {
    expect(bedrockEmbeddingFamily(TITAN)).toBe('titan');
    expect(bedrockEmbeddingFamily('us.cohere.embed-v4:0')).toBe('cohere');
    expect(bedrockEmbeddingFamily('arn:aws:bedrock:us-east-1::foundation-model/cohere.embed-multilingual-v3')).toBe(
      'cohere',
    );
    expect(bedrockEmbeddingFamily('anthropic.claude-3-5-haiku-20241022-v1:0')).toBeUndefined();
    expect(bedrockEmbeddingFamily('amazon.titan-text-express-v1')).toBeUndefined();
  });
});

describe('BedrockProvider.embed', () => {
  it('Titan: one InvokeModel per text, signed, dimensions passed, token counts summed', async () => {
    const server = await loopback.upstream((request, response) => {
      const { inputText } = JSON.parse(request.body) as { inputText: string };
      json(200, { embedding: [inputText.length, 0.5], inputTextTokenCount: inputText.length })(request, response);
    });

    const answer = await provider.embed(attempt(server, TITAN, { input: ['ab', 'cde'], dimensions: 2 }));

    expect(sent(server)).toEqual([
      { inputText: 'ab', dimensions: 2 },
      { inputText: 'cde', dimensions: 2 },
    ]);
    expect(server.requests[0].path).toBe(`/model/${encodeURIComponent(TITAN)}/invoke`);
    expect(String(server.requests[0].headers.authorization)).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIATESTBEDROCK0001\//,
    );
    expect(answer).toEqual({
      object: 'list',
      model: TITAN,
      data: [
        { object: 'embedding', index: 0, embedding: [2, 0.5] },
        { object: 'embedding', index: 1, embedding: [3, 0.5] },
      ],
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
  });

  it('Cohere: 96 texts a call, input_type the client’s or search_document, the count from Bedrock’s header', async () => {
    const server = await loopback.upstream((request, response) => {
      const { texts } = JSON.parse(request.body) as { texts: string[] };
      json(
        200,
        { id: 'e', response_type: 'embeddings_by_type', embeddings: { float: texts.map(() => [0.25]) } },
        { 'x-amzn-bedrock-input-token-count': String(texts.length * 2) },
      )(request, response);
    });
    const texts = Array.from({ length: 100 }, (_, at) => `t${at}`);

    const answer = await provider.embed(attempt(server, COHERE, { input: texts }));
    const query = await provider.embed(attempt(server, COHERE, { input: 'q', input_type: 'search_query' }));

    expect(sent(server)).toEqual([
      { texts: texts.slice(0, 96), input_type: 'search_document', embedding_types: ['float'] },
      { texts: texts.slice(96), input_type: 'search_document', embedding_types: ['float'] },
      { texts: ['q'], input_type: 'search_query', embedding_types: ['float'] },
    ]);
    expect(answer.data).toHaveLength(100);
    expect(answer.data[99]).toEqual({ object: 'embedding', index: 99, embedding: [0.25] });
    expect(answer.usage).toEqual({ prompt_tokens: 200, total_tokens: 200 });
    expect(query.usage.prompt_tokens).toBe(2);
  });

  it('answers base64 of the float32s when asked, as OpenAI does', async () => {
    const server = await loopback.upstream(json(200, { embedding: [0.5, -2], inputTextTokenCount: 1 }));

    const answer = await provider.embed(attempt(server, TITAN, { encoding_format: 'base64' }));

    expect(answer.data[0].embedding).toBe(Buffer.from(new Float32Array([0.5, -2]).buffer).toString('base64'));
  });

  it.each([
    ['a vector of strings', { embedding: ['0.5'], inputTextTokenCount: 1 }],
    ['no token count', { embedding: [0.5] }],
    ['no vector', { inputTextTokenCount: 1 }],
  ])('fails a Titan answer with %s as malformed', async (_name, body) => {
    const server = await loopback.upstream(json(200, body));

    const error = await rejection(provider.embed(attempt(server, TITAN, {})));

    expect(isProviderFailure(error) && [error.kind, error.code]).toEqual(['transient', 'bad_response']);
  });

  it('fails a Cohere answer with fewer vectors than texts as malformed', async () => {
    const server = await loopback.upstream(json(200, { embeddings: [[0.5]] }));

    const error = await rejection(provider.embed(attempt(server, COHERE, { input: ['a', 'b'] })));

    expect(isProviderFailure(error) && error.code).toBe('bad_response');
  });

  it('refuses token arrays and a model that does not embed, sending nothing', async () => {
    const server = await loopback.upstream(json(200, {}));

    const tokens = await rejection(provider.embed(attempt(server, TITAN, { input: [1, 2] })));
    const chat = await rejection(provider.embed(attempt(server, 'anthropic.claude-3-5-haiku-20241022-v1:0', {})));

    expect(tokens).toMatchObject({
      kind: 'invalid_request',
      message: `target bedrock/${TITAN} takes text, not tokens`,
    });
    expect(chat).toMatchObject({ kind: 'invalid_request' });
    expect(server.requests).toHaveLength(0);
  });
});

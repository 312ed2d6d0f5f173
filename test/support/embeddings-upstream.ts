import type { UpstreamHandler } from './upstream';

/** The vector a test upstream gives `input` at `dimensions`: the same input, the same vector. */
export function vectorOf(input: string | number[], dimensions: number): number[] {
  const text = typeof input === 'string' ? input : input.join(',');
  const vector: number[] = [];
  for (let at = 0; at < dimensions; at++) {
    const code = text.charCodeAt(at % Math.max(1, text.length)) || 0;
    // Exact in float32: a multiple of 1/256 below 1, so a base64 round trip gives it back as is.
    vector.push(((code * (at + 1)) % 256) / 256);
  }
  return vector;
}

/** Little-endian float32s in base64: OpenAI's `encoding_format: base64`. */
export function base64Of(vector: number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}

/** Tokens the test upstream reports per input: one per word, as a count a test can state. */
export function wordsOf(input: string | number[]): number {
  return typeof input === 'string' ? input.split(/\s+/).filter(Boolean).length : input.length;
}

/**
 * A loopback server speaking OpenAI's embeddings wire: one vector per input ({@link vectorOf}),
 * `dimensions` (default 8) long, floats or base64 as asked, usage one token per word.
 */
export function embeddingsUpstream(model = 'embed-test'): UpstreamHandler {
  return (request, response) => {
    const body = JSON.parse(request.body) as {
      input: string | string[] | number[] | number[][];
      dimensions?: number;
      encoding_format?: string;
    };
    const { input } = body;
    const inputs: Array<string | number[]> =
      typeof input === 'string' ? [input] : typeof input[0] === 'number' ? [input as number[]] : (input as string[]);
    const dimensions = body.dimensions ?? 8;
    const tokens = inputs.reduce((sum, one) => sum + wordsOf(one), 0);
    const answer = {
      object: 'list',
      model,
      data: inputs.map((one, index) => {
        const vector = vectorOf(one, dimensions);
        return { object: 'embedding', index, embedding: body.encoding_format === 'base64' ? base64Of(vector) : vector };
      }),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  };
}

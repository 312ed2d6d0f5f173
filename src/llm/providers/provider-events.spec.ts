import type { Readable } from 'node:stream';
import { SystemClock } from '../../common';
import type { HttpPool } from '../../containment/http-pool';
import { loopbackPool, providerAttempt } from '../../../test/support/provider-attempt';
import { eventually } from '../../../test/support/eventually';
import { Upstream } from '../../../test/support/upstream';
import type { ProviderTarget } from './llm-provider';
import { providerEventBatches } from './provider-events';
import { postStream } from './provider-exchange';

const target: ProviderTarget = {
  provider: 'openai',
  model: 'gpt-4o-mini',
  label: 'openai:gpt-4o-mini',
} as ProviderTarget;
const ANSWER = 'data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n';

/** The body of one streamed request to `upstream`, through the pool. */
async function bodyOf(upstream: Upstream, pool: HttpPool): Promise<Readable> {
  const attempt = providerAttempt(target, { model: target.model, messages: [] }, { pool });
  return postStream(attempt, upstream.url('/v1/chat/completions'), {}, { stream: true }, new SystemClock());
}

/** Reads `body` as a reader that stops at `data: [DONE]` does; the events' data before it. */
async function readToDone(body: Readable): Promise<string[]> {
  const attempt = providerAttempt(target, { model: target.model, messages: [] });
  const data: string[] = [];
  for await (const events of providerEventBatches(attempt, body)) {
    for (const event of events) {
      if (event.data === '[DONE]') return data;
      data.push(event.data);
    }
  }
  throw new Error('the body ended without [DONE]');
}

/** Whether undici pushed the end of `body`: all of it has arrived. */
function pushedItsEnd(body: Readable): boolean {
  return (body as Readable & { _readableState: { ended: boolean } })._readableState.ended;
}

/** How `body` ends: `end` then `close`, or `close` after an error. */
function ending(body: Readable): Promise<{ ended: boolean; error: unknown }> {
  let ended = false;
  let error: unknown;
  body.on('end', () => (ended = true));
  body.on('error', (failure) => (error = failure));
  return new Promise((resolve) => body.once('close', () => resolve({ ended, error })));
}

describe('providerEventBatches', () => {
  let pool: HttpPool;
  let upstream: Upstream;

  beforeEach(() => {
    pool = loopbackPool();
  });

  afterEach(async () => {
    await pool.close();
    await upstream.close();
  });

  it('lets a body that arrived whole end by itself when the reader stops at [DONE]: it ends, with no abort error', async () => {
    upstream = await Upstream.start((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(ANSWER);
    });
    for (let turn = 0; turn < 3; turn++) {
      const body = await bodyOf(upstream, pool);
      // The whole answer is in (its end pushed) before the reader starts.
      await eventually(() => expect(pushedItsEnd(body)).toBe(true));
      const ended = ending(body);
      expect(await readToDone(body)).toEqual(['{"n":1}', '{"n":2}']);
      expect(await ended).toEqual({ ended: true, error: undefined });
    }
  });

  it('destroys a body still open when the reader stops at [DONE]: the connection is let go at once', async () => {
    upstream = await Upstream.start((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // [DONE], then nothing more, and no end of the response.
      response.write(ANSWER);
    });
    const body = await bodyOf(upstream, pool);
    const ended = ending(body);
    expect(await readToDone(body)).toEqual(['{"n":1}', '{"n":2}']);
    expect((await ended).ended).toBe(false);
    expect(body.destroyed).toBe(true);
  });
});

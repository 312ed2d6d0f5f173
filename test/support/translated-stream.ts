import Fastify from 'fastify';
import { FASTIFY_PLATFORM } from '../../src/common/nest';
import type { ChatChunk } from '../../src/llm/chat.types';
import { SseReply } from '../../src/llm/streaming/sse-reply';
import type { TranslatedStreamSink } from '../../src/llm/streaming/translated-stream-sink';

/** One named Server-Sent Event: its `event:` name and its `data:` JSON. */
export interface NamedEvent {
  event: string;
  data: Record<string, any>;
}

/**
 * The named events a translated stream sink writes for `chunks`, through a real Fastify reply
 * (answered by `inject`, no socket): the sink opened, each chunk written in order, then ended.
 */
export async function sinkEvents(
  makeSink: (sse: SseReply) => TranslatedStreamSink,
  chunks: ChatChunk[],
): Promise<NamedEvent[]> {
  const app = Fastify();
  app.post('/', async (_request, reply) => {
    const sink = makeSink(new SseReply(FASTIFY_PLATFORM, reply, {}));
    sink.open({});
    for (const chunk of chunks) await sink.write(chunk);
    sink.end();
  });
  try {
    const answer = await app.inject({ method: 'POST', url: '/' });
    return namedEvents(answer.payload);
  } finally {
    await app.close();
  }
}

/** The named events of an event stream's text. */
export function namedEvents(text: string): NamedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('event: '))
    .map((block) => {
      const [name, data] = block.split('\n');
      return { event: name.slice('event: '.length), data: JSON.parse(data.slice('data: '.length)) };
    });
}

/** A chunk of a streamed answer with one choice: its delta and finish reason; or, given `usage`, the usage chunk. */
export function chatChunk(
  delta: ChatChunk['choices'][number]['delta'] | null,
  finish: ChatChunk['choices'][number]['finish_reason'] = null,
  usage?: ChatChunk['usage'],
): ChatChunk {
  const base = {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk' as const,
    created: 1_700_000_000,
    model: 'gpt-test',
  };
  if (delta === null) return { ...base, choices: [], usage };
  return { ...base, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
}

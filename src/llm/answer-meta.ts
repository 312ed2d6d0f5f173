import type { HttpPlatform, PlatformReply } from '../common/nest';
import type { ChatAnswer } from './chat-call';

/** What every ingress says of how an answer was served: in `x-bulkhead-*` headers and a `bulkhead` field. */
export interface BulkheadAnswerField {
  servedBy: string;
  attempts: number;
  fromCache: boolean;
  similarity?: number;
  costUsd: number;
  hedged: boolean;
  replayed: boolean;
}

/** What the meta of an answer is made of: a chat answer's, or another route's (embeddings) of the same fields. */
export type AnswerMeta = Pick<ChatAnswer, 'servedBy' | 'attempts' | 'cache' | 'costUsd' | 'hedged' | 'replayed'> &
  Partial<Pick<ChatAnswer, 'similarity'>>;

/** Sends a whole (not streamed) answer: `200`, its `x-bulkhead-*` headers, and `body` as JSON. */
export function sendAnswer(platform: HttpPlatform, reply: PlatformReply, answer: AnswerMeta, body: object): void {
  platform.setHeader(reply, 'x-bulkhead-served-by', answer.servedBy);
  platform.setHeader(reply, 'x-bulkhead-attempts', String(answer.attempts));
  platform.setHeader(reply, 'x-bulkhead-cache', answer.cache);
  platform.setHeader(reply, 'x-bulkhead-cost-usd', answer.costUsd.toFixed(6));
  platform.setHeader(reply, 'x-bulkhead-hedged', String(answer.hedged));
  platform.sendJson(reply, 200, body);
}

/** The `bulkhead` field beside the answer's own. */
export function bulkheadField(answer: AnswerMeta): BulkheadAnswerField {
  return {
    servedBy: answer.servedBy,
    attempts: answer.attempts,
    fromCache: answer.cache === 'hit' || answer.cache === 'semantic',
    similarity: answer.similarity,
    costUsd: answer.costUsd,
    hedged: answer.hedged,
    replayed: answer.replayed,
  };
}

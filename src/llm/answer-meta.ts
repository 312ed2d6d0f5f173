import type { FastifyReply } from 'fastify';
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

/** Sets the `x-bulkhead-*` headers of a whole (not streamed) answer. */
export function answerHeaders(reply: FastifyReply, answer: AnswerMeta): FastifyReply {
  return reply
    .header('x-bulkhead-served-by', answer.servedBy)
    .header('x-bulkhead-attempts', String(answer.attempts))
    .header('x-bulkhead-cache', answer.cache)
    .header('x-bulkhead-cost-usd', answer.costUsd.toFixed(6))
    .header('x-bulkhead-hedged', String(answer.hedged));
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

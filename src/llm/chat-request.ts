import { compileBodyParser, ResilienceError } from '../common';
import type { ChatRequest } from './chat.types';
import { chatRequestSchema } from './wire';

const parseChatBody = compileBodyParser(chatRequestSchema);

/** The request as the route reads it, or `invalid_request` naming the first field that is wrong. */
export function parseChatRequest(body: unknown): ChatRequest {
  const request = parseChatBody(body) as ChatRequest;
  if (request.service_tier !== undefined && request.service_tier !== 'auto' && request.service_tier !== 'default') {
    // Other tiers bill at other rates than the price table's: a reservation could not hold them.
    throw new ResilienceError('invalid_request', 'service_tier: only auto or default is supported');
  }
  if (request.stream_options != null && request.stream !== true) {
    // As OpenAI answers it: the options describe a stream.
    throw new ResilienceError('invalid_request', 'stream_options: only allowed when stream is true');
  }
  return request;
}

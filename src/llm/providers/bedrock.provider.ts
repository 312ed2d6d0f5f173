import type { Clock } from '../../common';
import type { ChatChunk, ChatCompletion } from '../chat.types';
import type { EmbeddingsAnswer } from '../wire';
import { fromAnthropicAnswer } from './messages-to-chat-answer';
import { messagesPassThrough } from './messages-pass-through';
import { anthropicChunks } from './messages-to-chat-stream';
import { awsSigningMaterial, type Environment } from './bedrock-credentials';
import {
  bedrockCountTokensBody,
  type BedrockInvocation,
  bedrockInvokeUrl,
  signedBedrockHeaders,
  toBedrockBody,
} from './bedrock-request';
import { BedrockTokenCounter } from './bedrock-count-tokens';
import { bedrockEvents } from './bedrock-stream';
import { bedrockEmbed } from './bedrock-embeddings';
import type { EmbeddingAttempt, LlmProvider, ProviderAttempt } from './llm-provider';
import { postJson, postStream } from './provider-exchange';

/**
 * Anthropic models on AWS Bedrock: the request through the same translation as the `anthropic`
 * provider, POSTed to `/model/{model id}/invoke` (or `/invoke-with-response-stream`) and signed
 * with SigV4; the answer is the Messages API's, translated back the same way (a stream's events
 * come in AWS's binary event stream, each one Anthropic's). A target's `apiKey` is not used: the
 * keys are AWS's own.
 *
 * Credentials are read from `env` (`process.env` by default) on every request, not copied when
 * the provider is built: a session token rotated by writing it into `process.env` (a refresher in
 * this process) is used from the next request on. Nothing else is watched: a token renewed
 * outside the process (a file, the instance or container metadata endpoints) needs a restart
 * with the new environment. Reading a few variables costs next to nothing beside the request.
 */
export class BedrockProvider implements LlmProvider {
  readonly name = 'bedrock';
  private readonly counter: BedrockTokenCounter;

  constructor(
    private readonly clock: Clock,
    private readonly env: Environment = process.env,
  ) {
    this.counter = new BedrockTokenCounter(clock);
  }

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { url, headers, body } = this.signedRequest(attempt, 'invoke');
    const answer = await postJson(attempt, url, headers, body, this.clock);
    // Bedrock's answer may leave out `model`: the translation then names the target's model id.
    const completion = fromAnthropicAnswer(attempt.target, answer, this.clock.wallNow());
    if (messagesPassThrough(attempt)) completion.passThroughAnswer = answer as Record<string, unknown>;
    return completion;
  }

  /** InvokeModelWithResponseStream: the same body, its events read from AWS's event stream. */
  async *stream(attempt: ProviderAttempt): AsyncGenerator<ChatChunk> {
    const { url, headers, body } = this.signedRequest(attempt, 'invoke-with-response-stream');
    const answer = await postStream(attempt, url, headers, body, this.clock);
    const events = bedrockEvents(attempt, answer, this.clock);
    yield* anthropicChunks(events, attempt.target, this.clock, messagesPassThrough(attempt) !== undefined);
  }

  /**
   * CountTokens with the InvokeModel body the request would send: Bedrock's own count, free of
   * charge, where the model has it (see BedrockTokenCounter: the foundation model's id for an
   * inference profile's, and a model without it not asked again for an hour).
   */
  countTokens(attempt: ProviderAttempt): Promise<number> {
    return this.counter.count(attempt, (modelId, refusal) => {
      const counting = { ...attempt, target: { ...attempt.target, model: modelId } };
      const { url, headers, body } = this.signedRequest(counting, 'count-tokens');
      return postJson(counting, url, headers, body, this.clock, { refusal });
    });
  }

  /** Titan and Cohere embeddings through InvokeModel, each with its own body (`bedrock-embeddings.ts`). */
  embed(attempt: EmbeddingAttempt): Promise<EmbeddingsAnswer> {
    return bedrockEmbed(this.clock, this.env, attempt);
  }

  private signedRequest(attempt: ProviderAttempt, invocation: BedrockInvocation) {
    const { target } = attempt;
    // Before the translation: a target that cannot sign fails whatever the request.
    const material = awsSigningMaterial(target, this.env);
    const invokeBody = toBedrockBody(attempt);
    const body = invocation === 'count-tokens' ? bedrockCountTokensBody(invokeBody) : invokeBody;
    const url = bedrockInvokeUrl(target, material.region, invocation);
    // postJson and postStream serialize `body` again; JSON.stringify of the same plain object is
    // the same text, so the payload hash signed here is that of the bytes sent.
    const headers = signedBedrockHeaders(url, JSON.stringify(body), material, this.clock.wallNow(), invocation);
    return { url, headers, body };
  }
}

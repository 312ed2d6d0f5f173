import { type Clock, sleep } from '../../common';
import type { FakeStepConfig } from '../llm.options';
import { completionChunks } from '../streaming/completion-chunks';
import { carriesContent } from '../streaming/stream-assembly';
import type {
  ChatChunk,
  ChatCompletion,
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatUsage,
  FinishReason,
} from '../chat.types';
import type { EmbeddingsAnswer } from '../wire';
import { fakeEmbed } from './fake-embeddings';
import type { EmbeddingAttempt, LlmProvider, ProviderAttempt } from './llm-provider';
import { providerStatusError, type ProviderErrorAnswer, streamCutError } from './provider-errors';

/** Characters per estimated token: the usual rule of thumb for English text. */
const CHARS_PER_TOKEN = 4;
/** Characters per streamed chunk: a few words, so a short answer still streams in several. */
const STREAM_PIECE_CHARS = 16;

/**
 * An offline provider answering from its target's `script`: one step per attempt, in order,
 * counted per target (hedged attempts take consecutive steps), the last step repeating. A step
 * waits `delayMs` on the clock (stopped by the attempt's signal), then fails with `status`
 * through the same mapping as a real provider's answer, or answers `text` or a `toolCall`.
 * Without a script, or on a step that names no answer, it echoes the last user message's text
 * verbatim, so an answer is easy to predict from the request.
 *
 * Usage is the step's `usage`, else estimated: ceil(characters / 4) of the messages' text
 * (string contents, text parts, tool call names and arguments) and of the answer. An estimated
 * text answer longer than the attempt's output cap is cut to it and finishes with `length`, as a
 * real provider held to `max_tokens` would; a scripted `usage` is reported as given. It never
 * touches the network.
 */
export class FakeProvider implements LlmProvider {
  readonly name = 'fake';
  private steps = 0;

  constructor(
    private readonly script: readonly FakeStepConfig[] | undefined,
    private readonly clock: Clock,
  ) {}

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { number, step } = await this.nextStep(attempt);
    return this.answer(attempt, number, step);
  }

  /** Vectors from each input's hash, at once and offline (`fake-embeddings.ts`); the script is the chat's alone. */
  embed(attempt: EmbeddingAttempt): Promise<EmbeddingsAnswer> {
    return Promise.resolve(fakeEmbed(attempt));
  }

  /**
   * The same answer as {@link complete}, {@link STREAM_PIECE_CHARS} characters a chunk,
   * `chunkDelayMs` apart; `cutAfterChunks` ends it early without an end, as a dropped
   * connection would.
   */
  async *stream(attempt: ProviderAttempt): AsyncGenerator<ChatChunk> {
    const { number, step } = await this.nextStep(attempt);
    let contentChunks = 0;
    for (const chunk of completionChunks(this.answer(attempt, number, step), STREAM_PIECE_CHARS)) {
      const content = carriesContent(chunk);
      // Dropped once that many content chunks went: before the next one, or before the finish after the last.
      if (contentChunks === step?.cutAfterChunks && (content || contentChunks > 0)) {
        throw streamCutError(attempt.target);
      }
      if (content) {
        if (contentChunks > 0 && step?.chunkDelayMs) await sleep(this.clock, step.chunkDelayMs, attempt.signal);
        contentChunks++;
      }
      yield chunk;
    }
  }

  /** The attempt's step, once its `delayMs` has passed; a failing step throws here. */
  private async nextStep(attempt: ProviderAttempt): Promise<{ number: number; step: FakeStepConfig | undefined }> {
    const { signal, target } = attempt;
    const number = ++this.steps;
    const step = this.script?.[Math.min(number, this.script.length) - 1];
    if (signal.aborted) throw signal.reason;
    if (step?.delayMs) await sleep(this.clock, step.delayMs, signal);
    if (step?.status !== undefined) throw providerStatusError(target, scriptedFailure(step), this.clock.wallNow());
    return { number, step };
  }

  private answer(attempt: ProviderAttempt, number: number, step: FakeStepConfig | undefined): ChatCompletion {
    const { target, request } = attempt;
    const promptTokens = estimateTokens(promptText(request.messages));
    let content: string | null;
    let finishReason: FinishReason;
    let completionTokens: number;
    let toolCalls: ChatCompletion['choices'][number]['message']['tool_calls'];
    if (step?.toolCall) {
      const args = JSON.stringify(step.toolCall.arguments);
      toolCalls = [
        { id: `call_fake_${number}`, type: 'function', function: { name: step.toolCall.name, arguments: args } },
      ];
      content = null;
      finishReason = 'tool_calls';
      completionTokens = estimateTokens(step.toolCall.name + args);
    } else {
      const text = step?.text ?? lastUserText(request);
      const capChars = attempt.maxOutputTokens * CHARS_PER_TOKEN;
      content = text.length > capChars ? text.slice(0, capChars) : text;
      finishReason = text.length > capChars ? 'length' : 'stop';
      completionTokens = estimateTokens(content);
    }

    const usage: ChatUsage = step?.usage
      ? usageOf(step.usage.promptTokens, step.usage.completionTokens)
      : usageOf(promptTokens, completionTokens);
    const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content, refusal: null };
    if (toolCalls) message.tool_calls = toolCalls;
    return {
      id: `chatcmpl-fake-${number}`,
      object: 'chat.completion',
      created: Math.floor(this.clock.wallNow() / 1000),
      model: target.model,
      choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
      usage,
    };
  }
}

/** A failing step as a provider's error answer would read on the wire. */
function scriptedFailure(step: FakeStepConfig): ProviderErrorAnswer {
  const headers = step.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(step.retryAfterMs) };
  const code = step.code ?? null;
  // The code in every place a provider puts one, so either provider's vocabulary maps.
  const error = {
    message: 'scripted failure',
    type: code ?? 'fake_error',
    param: null,
    code,
    details: { error_code: code },
  };
  return { status: step.status!, headers, body: { error } };
}

function usageOf(promptTokens: number, completionTokens: number): ChatUsage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0 },
  };
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

function promptText(messages: readonly ChatMessage[]): string {
  let text = '';
  for (const message of messages) {
    text += contentText(message.content);
    for (const call of message.tool_calls ?? []) text += call.function.name + call.function.arguments;
  }
  return text;
}

function lastUserText(request: ChatRequest): string {
  const message = request.messages.findLast((candidate) => candidate.role === 'user');
  return message ? contentText(message.content) : '';
}

function contentText(content: string | readonly ChatContentPart[] | null): string {
  if (typeof content === 'string') return content;
  if (!content) return '';
  return content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

import { isIndexBelow, MAX_CHOICES, MAX_TOOL_CALLS } from '../wire';
import type { ChatChunk, ChatCompletion, ChatToolCall, ChatUsage, FinishReason } from '../chat.types';

/** Characters per token when an answer's tokens are counted from its text: the usual rule for English. */
const CHARS_PER_TOKEN = 4;

interface AssembledChoice {
  content: string;
  refusal: string;
  /** By the index the provider numbers them with: a map, never an array a large index would stretch. */
  toolCalls: Map<number, ChatToolCall>;
  finishReason: FinishReason | null;
}

/**
 * What the chunks of one streamed answer add up to: the answer as one `chat.completion` (for the
 * cache and an idempotent replay), and its usage, as the provider reported it in its last chunk
 * or, for a stream that broke or a provider that reports none, counted from what arrived.
 */
export class StreamAssembly {
  private id = '';
  private model = '';
  private created = 0;
  private readonly choices = new Map<number, AssembledChoice>();
  private reported: ChatUsage | undefined;
  private contentChunks = 0;
  /**
   * The answer's characters so far: its text, refusals, tool calls, and a pass-through stream's
   * output no choice shows (thinking), which the provider bills.
   */
  private characters = 0;
  private passThroughAnswer: Record<string, unknown> | undefined;

  /**
   * @param maxCharacters the most characters the answer may hold: a stream that sends more than its
   *   output cap could produce is refused (thrown) rather than held in memory, whatever it sends.
   */
  constructor(private readonly maxCharacters = Number.POSITIVE_INFINITY) {}

  add(chunk: ChatChunk): void {
    if (!this.id) {
      this.id = chunk.id;
      this.model = chunk.model;
      this.created = chunk.created;
    }
    if (chunk.usage) this.reported = chunk.usage;
    if (chunk.passThroughAnswer) this.passThroughAnswer = chunk.passThroughAnswer;
    const hidden = chunk.passThroughEvent?.hiddenOutputChars ?? 0;
    if (hidden > 0) {
      this.characters += hidden;
      this.contentChunks++;
    }
    for (const { index, delta, finish_reason: finishReason } of chunk.choices) {
      let choice = this.choices.get(index);
      if (!choice) {
        // The readers refuse such a chunk already; nothing here is ever sized by an upstream's number.
        if (!isIndexBelow(index, MAX_CHOICES)) throw new RangeError('choice index out of range');
        choice = { content: '', refusal: '', toolCalls: new Map(), finishReason: null };
        this.choices.set(index, choice);
      }
      if (typeof delta.content === 'string' && delta.content !== '') {
        choice.content += delta.content;
        this.characters += delta.content.length;
        this.contentChunks++;
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        choice.refusal += delta.refusal;
        this.characters += delta.refusal.length;
        this.contentChunks++;
      }
      for (const piece of delta.tool_calls ?? []) {
        this.contentChunks++;
        let call = choice.toolCalls.get(piece.index);
        if (!call) {
          if (!isIndexBelow(piece.index, MAX_TOOL_CALLS)) throw new RangeError('tool call index out of range');
          call = { id: '', type: 'function', function: { name: '', arguments: '' } };
          choice.toolCalls.set(piece.index, call);
        }
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) {
          call.function.name += piece.function.name;
          this.characters += piece.function.name.length;
        }
        if (piece.function?.arguments) {
          call.function.arguments += piece.function.arguments;
          this.characters += piece.function.arguments.length;
        }
      }
      if (finishReason) choice.finishReason = finishReason;
    }
    if (this.characters > this.maxCharacters) throw new RangeError('the answer outgrew what its output cap allows');
  }

  /** Whether the provider reported its usage (the stream ended as it should). */
  get usageReported(): boolean {
    return this.reported !== undefined;
  }

  /**
   * The provider's usage; else the prompt at its estimate (an upper bound) and the completion
   * counted from what was streamed: at least one token per content chunk, and at least one per
   * four characters, whichever is more.
   */
  usage(promptEstimate: number): ChatUsage {
    if (this.reported) return this.reported;
    const completion = Math.max(this.contentChunks, Math.ceil(this.characters / CHARS_PER_TOKEN));
    return { prompt_tokens: promptEstimate, completion_tokens: completion, total_tokens: promptEstimate + completion };
  }

  /** The answer as one completion; only meaningful once the stream ended as it should. */
  completion(promptEstimate: number): ChatCompletion {
    const indexes = [...this.choices.keys()].sort((a, b) => a - b);
    const completion: ChatCompletion = {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      choices: indexes.map((index) => {
        const choice = this.choices.get(index)!;
        const toolCalls = [...choice.toolCalls.keys()].sort((a, b) => a - b).map((at) => choice.toolCalls.get(at)!);
        const message: ChatCompletion['choices'][number]['message'] = {
          role: 'assistant',
          content: choice.content === '' && toolCalls.length > 0 ? null : choice.content,
          refusal: choice.refusal === '' ? null : choice.refusal,
        };
        if (toolCalls.length > 0) message.tool_calls = toolCalls;
        return { index, message, finish_reason: choice.finishReason ?? 'stop', logprobs: null };
      }),
      usage: this.usage(promptEstimate),
    };
    if (this.passThroughAnswer) completion.passThroughAnswer = this.passThroughAnswer;
    return completion;
  }
}

/**
 * Whether a chunk carries some of the answer (text, a refusal, a tool call; in a pass-through stream,
 * any event with content, thinking too): the commit point.
 */
export function carriesContent(chunk: ChatChunk): boolean {
  if (chunk.passThroughEvent?.content) return true;
  for (const { delta } of chunk.choices) {
    if ((typeof delta.content === 'string' && delta.content !== '') || delta.tool_calls?.length) return true;
    if (typeof delta.refusal === 'string' && delta.refusal !== '') return true;
  }
  return false;
}

/**
 * What a client of the streaming benchmark checks of every stream, event by event: OpenAI's
 * chunks in the order the upstream sent them, each content chunk the one expected next, the
 * finish chunk after the content, the usage chunk after it, `data: [DONE]` last and nothing after.
 */
import { CONTENT_CHUNKS, piece, USAGE } from './sse-upstream';

/** Follows a stream's events in order; `problem` holds the first thing wrong. */
export class StreamCheck {
  /** Content chunks seen, each the one expected next. */
  content = 0;
  problem: string | undefined;
  private finished = false;
  private usage = false;
  private done = false;

  event(event: string): void {
    if (this.problem !== undefined) return;
    const data = event
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(line.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (this.done) return this.wrong(`an event after [DONE]: ${event}`);
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    let chunk: {
      error?: unknown;
      choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>;
      usage?: { completion_tokens?: unknown } | null;
    };
    try {
      chunk = JSON.parse(data) as typeof chunk;
    } catch {
      return this.wrong(`an event that is not JSON: ${event}`);
    }
    if (chunk.error !== undefined) return this.wrong(`an error event: ${data}`);
    if (!Array.isArray(chunk.choices)) return this.wrong(`a chunk without choices: ${data}`);
    if (chunk.usage) {
      if (!this.finished || chunk.choices.length > 0) return this.wrong(`a usage chunk out of place: ${data}`);
      if (chunk.usage.completion_tokens !== USAGE.completion_tokens) return this.wrong(`another usage: ${data}`);
      this.usage = true;
      return;
    }
    const [choice] = chunk.choices;
    const content = choice?.delta?.content;
    if (typeof content === 'string' && content !== '') {
      if (this.finished) return this.wrong(`content after the finish chunk: ${data}`);
      if (content !== piece(this.content)) {
        return this.wrong(`content chunk ${this.content} was ${JSON.stringify(content)}, not ${piece(this.content)}`);
      }
      this.content++;
    }
    if (choice?.finish_reason === 'stop') this.finished = true;
  }

  /** What is missing from a stream that ended (`rest`: what came after its last whole event). */
  incomplete(rest: string): string | undefined {
    if (this.content !== CONTENT_CHUNKS) return `${this.content} of ${CONTENT_CHUNKS} content chunks`;
    if (!this.finished) return 'no finish chunk';
    if (!this.usage) return 'no usage chunk';
    if (!this.done) return 'no [DONE]';
    if (rest.trim() !== '') return `bytes after [DONE]: ${rest}`;
    return undefined;
  }

  private wrong(problem: string): void {
    this.problem = problem;
  }
}

import type { ChatChunk, ChatCompletion } from '../chat.types';

/**
 * A whole `chat.completion` as the chunks OpenAI would have streamed it: per choice, the role,
 * the content in pieces of about `pieceChars` characters (cut between words where one is near),
 * the refusal, each tool call whole, the finish reason; then the usage chunk, with no choices.
 * What a cache hit replays to a streaming client, and how the offline provider streams.
 */
export function completionChunks(completion: ChatCompletion, pieceChars = 64): ChatChunk[] {
  const { id, created, model } = completion;
  const chunk = (choices: ChatChunk['choices'], usage?: ChatChunk['usage']): ChatChunk => {
    const made: ChatChunk = { id, object: 'chat.completion.chunk', created, model, choices };
    if (usage !== undefined) made.usage = usage;
    return made;
  };
  const chunks: ChatChunk[] = [];
  for (const choice of completion.choices) {
    const { index, message } = choice;
    chunks.push(chunk([{ index, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }]));
    for (const piece of textPieces(message.content ?? '', pieceChars)) {
      chunks.push(chunk([{ index, delta: { content: piece }, finish_reason: null, logprobs: null }]));
    }
    if (message.refusal) {
      chunks.push(chunk([{ index, delta: { refusal: message.refusal }, finish_reason: null, logprobs: null }]));
    }
    message.tool_calls?.forEach((call, callIndex) => {
      const delta = {
        tool_calls: [{ index: callIndex, id: call.id, type: 'function' as const, function: call.function }],
      };
      chunks.push(chunk([{ index, delta, finish_reason: null, logprobs: null }]));
    });
    chunks.push(chunk([{ index, delta: {}, finish_reason: choice.finish_reason, logprobs: null }]));
  }
  chunks.push(chunk([], completion.usage));
  return chunks;
}

/**
 * `text` in pieces of about `size` characters, each ending after a space where one is in its last
 * quarter, and never between the two halves of a surrogate pair.
 */
export function textPieces(text: string, size: number): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end - 1);
      if (space >= start + Math.floor((size * 3) / 4)) end = space + 1;
      // Each piece goes out as JSON of its own: never half of a character outside the BMP (an emoji).
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end++;
    }
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

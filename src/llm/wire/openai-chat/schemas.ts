import { z } from 'zod';
import { MAX_CHOICES, MAX_TOOL_CALLS } from '../limits';
import { tokenCount } from '../token-count';

/*
 * OpenAI's Chat Completions as an upstream answers it: the fields the gateway reads, each with the
 * type it relies on. Everything else passes as given (loose objects), since OpenAI-compatible
 * servers add fields of their own. `null` is taken wherever servers are known to send it for
 * "none" (vLLM, llama.cpp, Ollama); a wrong type is not.
 */

const choiceIndex = z
  .number()
  .int()
  .min(0)
  .max(MAX_CHOICES - 1);
const toolCallIndex = z
  .number()
  .int()
  .min(0)
  .max(MAX_TOOL_CALLS - 1);
const text = z.string().nullable().optional();

const usage = z.looseObject({
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  total_tokens: tokenCount.optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: tokenCount.nullable().optional() }).nullable().optional(),
});

const toolCallPiece = z.looseObject({
  index: toolCallIndex,
  id: text,
  type: text,
  function: z.looseObject({ name: text, arguments: text }).nullable().optional(),
});

const chunkChoice = z.looseObject({
  index: choiceIndex.optional(),
  delta: z.looseObject({
    role: text,
    content: text,
    refusal: text,
    tool_calls: z.array(toolCallPiece).max(MAX_TOOL_CALLS).nullable().optional(),
  }),
  finish_reason: text,
});

/** One `chat.completion.chunk` of a stream; its id, model and time may be missing (filled in). */
export const openAiChatChunk = z.looseObject({
  choices: z.array(chunkChoice).max(MAX_CHOICES),
  usage: usage.nullable().optional(),
});

const toolCall = z.looseObject({
  id: z.string(),
  type: text,
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

/** A whole `chat.completion`; its model and time may be missing (filled in). */
export const openAiChatAnswer = z.looseObject({
  id: z.string(),
  choices: z
    .array(
      z.looseObject({
        index: choiceIndex.optional(),
        message: z.looseObject({
          role: text,
          content: text,
          refusal: text,
          tool_calls: z.array(toolCall).max(MAX_TOOL_CALLS).nullable().optional(),
        }),
        finish_reason: text,
      }),
    )
    .min(1)
    .max(MAX_CHOICES),
  usage,
});

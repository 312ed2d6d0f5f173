import { z } from 'zod';

/*
 * OpenAI's Responses request, typed once: the schema the `/v1/responses` ingress reads a client's
 * body with, and the types its translation into Chat Completions reads. An `openai` target that
 * serves the Responses API (`responsesApi`) is sent the body as it came (the native pass-through);
 * every other target gets the translation.
 */

const count = z.int().min(1).max(10_000_000);

const inputText = z.looseObject({ type: z.enum(['input_text', 'output_text']), text: z.string() });
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().min(1, 'an image is sent by image_url (file_id needs a stored file)'),
  detail: z.enum(['low', 'high', 'auto']).optional(),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const contentPart = z.discriminatedUnion('type', [inputText, inputImage, refusalPart]);

const messageItem = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart)]),
});
const functionCallItem = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});
const functionCallOutputItem = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPart)]),
});
/** An earlier answer's reasoning, which clients send back: passed on only to a target that speaks Responses. */
const reasoningItem = z.looseObject({ type: z.literal('reasoning') });
/** An item of a kept response, by its id: the `/v1/responses` ingress replaces it with the item before anything reads it. */
const itemReference = z.looseObject({ type: z.literal('item_reference'), id: z.string().min(1).max(256) });
/** An item as a response's input or output holds it: what a kept response is read back as. */
export const responsesItemSchema = z.union([functionCallItem, functionCallOutputItem, reasoningItem, messageItem]);
const item = z.union([responsesItemSchema, itemReference]);

const functionTool = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1).max(128),
  description: z.string().nullable().optional(),
  parameters: z.record(z.string(), z.unknown()).nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullable().optional(),
    description: z.string().optional(),
  }),
]);

/**
 * OpenAI's Responses request: as far as Bulkhead reads it. `reasoning`, `include` and earlier
 * answers' reasoning items are accepted, and passed on only to a target sent the request natively; `store`, `previous_response_id` and
 * item references are the ingress's (kept responses); what needs other state (`conversation`,
 * `prompt`, `background`) and the built-in tools are refused by name.
 */
export const responsesRequestSchema = z
  .looseObject({
    model: z.string().min(1).max(256).meta({ description: 'A route of `llm.routes`.' }),
    input: z.union([z.string(), z.array(item).min(1)]),
    instructions: z.string().nullable().optional(),
    tools: z.array(functionTool).optional(),
    tool_choice: toolChoice.optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    max_output_tokens: count.nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    metadata: z.record(z.string(), z.string()).nullable().optional(),
    text: z.looseObject({ format: textFormat.optional() }).nullable().optional(),
    user: z.string().max(256).nullable().optional(),
    stream: z.boolean().nullable().optional(),
    store: z.boolean().nullable().optional(),
    previous_response_id: z.string().min(1).max(256).nullable().optional(),
  })
  .meta({ description: "OpenAI's Responses request." });

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;

/** An item of a response's input or output, references resolved. */
export type ResponsesItem = z.infer<typeof responsesItemSchema>;

/** An item of a request's input: an item, or a reference to a kept one. */
export type ResponsesInputEntry = z.infer<typeof item>;

/** A message's content part, as the ingress reads it. */
export type ResponsesContentPart = z.infer<typeof contentPart>;

import { z } from 'zod';

/** One route as OpenAI's SDKs read a model. */
export const openAiModelSchema = z.strictObject({
  id: z.string().meta({ description: "The route's name: the `model` to send." }),
  object: z.literal('model'),
  created: z.int().meta({ description: 'Unix seconds: when the routes were loaded.' }),
  owned_by: z.literal('bulkhead'),
});

/** One route as Anthropic's SDKs read a model. */
export const anthropicModelSchema = z.strictObject({
  type: z.literal('model'),
  id: z.string().meta({ description: "The route's name: the `model` to send." }),
  display_name: z.string(),
  created_at: z.string().meta({ description: 'RFC 3339: when the routes were loaded.' }),
});

/** `GET /v1/models`: OpenAI's list, or Anthropic's page when the request carries `anthropic-version`. */
export const modelListSchema = z.union([
  z.strictObject({ object: z.literal('list'), data: z.array(openAiModelSchema) }),
  z.strictObject({
    data: z.array(anthropicModelSchema),
    has_more: z.boolean(),
    first_id: z.string().nullable(),
    last_id: z.string().nullable(),
  }),
]);

/** `GET /v1/models/{id}`: one, in the shape of the list. */
export const modelSchema = z.union([openAiModelSchema, anthropicModelSchema]);

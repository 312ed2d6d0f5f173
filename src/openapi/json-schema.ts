import { z } from 'zod';

/** A JSON Schema (2020-12, the dialect of OpenAPI 3.1). */
export type JsonSchema = Record<string, unknown>;

/** Whether a schema describes a request as it is read (`input`) or an answer as it is sent (`output`). */
export type SchemaSide = 'input' | 'output';

// `z.custom` has no JSON Schema of its own: the ones Bulkhead uses state theirs in `.meta()`.
const OPTIONS = { target: 'draft-2020-12', unrepresentable: 'any' } as const;

/**
 * Named schemas converted together, for `#/components/schemas`: where one holds another, it
 * refers to it by `$ref` instead of repeating it.
 */
export function componentSchemas(named: Record<string, z.ZodType>, side: SchemaSide): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, { ...OPTIONS, io: side, uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(Object.entries(schemas).map(([id, schema]) => [id, asEmbedded(schema)]));
}

/** One schema shown in place (a parameter, a header, a text body). */
export function inlineSchema(schema: z.ZodType, side: SchemaSide): JsonSchema {
  return asEmbedded(z.toJSONSchema(schema, { ...OPTIONS, io: side }));
}

/** Without `$schema` and `$id`: the document states the dialect once, and its components are found by path. */
function asEmbedded(schema: JsonSchema): JsonSchema {
  const { $schema: _dialect, $id: _id, ...embedded } = schema;
  return embedded;
}

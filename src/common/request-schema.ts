import Ajv2020 from 'ajv/dist/2020';
import { z } from 'zod';
import { ResilienceError } from './errors/resilience-error';

/**
 * Parses one part of a request (a body, a batch entry, a header) with its schema, or throws
 * `invalid_request` with the message the schema gives its first problem. The value's own shape
 * comes before its fields: a body that is not an object, or that has keys it may not, says so
 * rather than naming one of its fields (zod lists field problems first).
 */
export function parseRequestPart<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { issues } = result.error;
  const issue = issues.find((candidate) => candidate.path.length === 0) ?? issues[0];
  throw new ResilienceError('invalid_request', issue.message);
}

/**
 * A JSON request body parsed with its schema, or `invalid_request` naming where its first
 * problem is: `messages.0.role: ...`, `model: is required`, `messages: must not be empty`.
 */
export function parseBodyFields<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ResilienceError('invalid_request', 'the body must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const at = issue.path.map(String).join('.') || '(body)';
  throw new ResilienceError('invalid_request', `${at}: ${describeIssue(issue, body)}`);
}

function describeIssue(issue: z.core.$ZodIssue, body: object): string {
  const missing = valueAt(body, issue.path) === undefined;
  if (missing && (issue.code === 'invalid_type' || issue.code === 'invalid_union')) return 'is required';
  if (issue.code === 'too_small' && issue.origin === 'array') return 'must not be empty';
  return issue.message;
}

/** The value at `path` in `value`, or undefined where the path leads nowhere. */
function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

// One compiler for every check; `strict: false` lets it take zod's annotations as they are.
const ajv = new Ajv2020({ strict: false, unicodeRegExp: false });

/**
 * `schema` compiled to code for the hot path: ajv compiles its JSON Schema (the one the OpenAPI
 * document shows), which checks a small invoke body in about half the time of zod. Custom types
 * must state their JSON Schema in `.meta()`; a property test holds the two to the same answers.
 */
export function compileRequestCheck<S extends z.ZodType>(schema: S): (value: unknown) => value is z.input<S> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
  return ajv.compile(json) as (value: unknown) => value is z.input<S>;
}

/**
 * A parser of `schema` for the hot path: the compiled check accepts a valid value without
 * running zod; a value it refuses goes to {@link parseRequestPart}, whose zod schema stays the
 * judge and names the problem. The schema must have no defaults or transforms (its output is
 * its input), since an accepted value is returned as it is.
 */
export function compileRequestParser<S extends z.ZodType>(schema: S): (value: unknown) => z.output<S> {
  const accepts = compileRequestCheck(schema);
  return (value) => (accepts(value) ? (value as z.output<S>) : parseRequestPart(schema, value));
}

/**
 * {@link compileRequestParser} for a JSON request body: a body the compiled check refuses goes to
 * {@link parseBodyFields}, which names where its first problem is. Same rule: no defaults or
 * transforms in `schema`.
 */
export function compileBodyParser<S extends z.ZodType>(schema: S): (body: unknown) => z.output<S> {
  const accepts = compileRequestCheck(schema);
  return (body) => (accepts(body) ? (body as z.output<S>) : parseBodyFields(schema, body));
}

import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import { ResilienceError } from '../common';
import type { ToolArguments, ToolInputSchema } from './tool';

// One compiler for every tool's schema; `strict: false` takes schemas written for other drafts' tools.
const ajv = new Ajv2020({ strict: false, allErrors: false });

/**
 * The check of a tool's declared input schema, compiled once at start-up: it throws a `schema`
 * error naming the first problem by its path (`arguments.ms must be integer`), never a value
 * the caller sent. A schema that is not an object schema, or does not compile, stops start-up.
 */
export function compileInputCheck(toolId: string, schema: ToolInputSchema): (args: ToolArguments) => void {
  if (typeof schema !== 'object' || schema === null || schema.type !== 'object') {
    throw new Error(`tool '${toolId}': inputSchema must be a JSON Schema with "type": "object"`);
  }
  let check: ReturnType<typeof ajv.compile>;
  try {
    check = ajv.compile(schema);
  } catch (error) {
    throw new Error(`tool '${toolId}': inputSchema is not a valid JSON Schema: ${(error as Error).message}`);
  }
  return (args) => {
    if (!check(args)) throw new ResilienceError('schema', describe(check.errors?.[0]));
  };
}

/** A path segment shown as it is: a name or an index. Any other key is caller input, never echoed. */
const SHOWN_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;

function describe(error: ErrorObject | undefined): string {
  if (!error) return "the arguments do not match the tool's input schema";
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => (SHOWN_SEGMENT.test(part) ? part : '*'));
  return `${['arguments', ...path].join('.')} ${error.message ?? 'is invalid'}`;
}

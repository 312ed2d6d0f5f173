/**
 * The deepest nesting of objects and arrays a request body may have, counting the body itself
 * (`{}` is 1 level, `{"arguments":{}}` 2).
 *
 * Real bodies nest a handful of levels: tool arguments rarely pass 10. A chat request with a
 * tool's or a response's JSON schema is the deepest common case, about 20-30: 4-5 levels down to
 * the schema, then two per nested object (`properties`, the property), and OpenAI caps a
 * structured-output schema at a few levels of object nesting (5 when it shipped). 64 leaves
 * twice that, and stays far below where recursive code fails: V8's `JSON.stringify` and a
 * recursive walker overflow the stack at a few thousand levels, which a 60 KB body reaches
 * (docs/pitfalls.md #19).
 *
 * @default 64
 */
export const MAX_JSON_DEPTH = 64;

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Whether `value` nests objects and arrays more than `maxDepth` levels deep (a scalar is 0
 * levels, `{}` and `[]` are 1). Walks with its own stack, never recursion, so no depth can
 * overflow it; it stops at the first container past the limit, so a circular value answers
 * `true` too. Only own enumerable fields count, as `JSON.stringify` sees them.
 *
 * On a parsed 1 KB body it costs about 0.08x of parsing that body (measured with Fastify's own
 * JSON parser as the baseline); a scan of the text before parsing cost 0.26x-0.77x.
 */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  if (!(Number.isInteger(maxDepth) && maxDepth >= 0)) {
    throw new RangeError(`maxDepth must be a non-negative integer, got ${maxDepth}`);
  }
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth === 0) return true;
  // Two parallel stacks (containers, their depths): no object made per container visited.
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(node)) {
      for (let index = 0; index < node.length; index++) {
        const child: unknown = node[index];
        if (child === null || typeof child !== 'object') continue;
        if (depth >= maxDepth) return true;
        nodes.push(child);
        depths.push(depth + 1);
      }
      continue;
    }
    const record = node as Record<string, unknown>;
    // for...in with an own-field check: Object.keys would make an array per object (1.8x here).
    for (const key in record) {
      const child = record[key];
      if (child === null || typeof child !== 'object' || !hasOwn.call(record, key)) continue;
      if (depth >= maxDepth) return true;
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

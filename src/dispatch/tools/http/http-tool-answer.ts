import { jsonDepthExceeds, MAX_JSON_DEPTH, ResilienceError } from '../../../common';

/**
 * An http tool's upstream answer as the call's result: `null` for an empty body, the text for
 * anything but JSON, and JSON parsed and checked before any of it is used. Its size is bounded
 * already (`maxResponseBytes`, by the pool). Its nesting is held to the request body's own limit
 * ({@link MAX_JSON_DEPTH}): `JSON.parse` reads any depth, but the result goes on through
 * recursive code (the response's serialiser, the idempotency record, canonical JSON), which
 * overflows the stack at a few thousand levels (docs/pitfalls.md #19) after the call was
 * counted, charged and recorded. Anything it cannot use is the attempt's `transient` failure,
 * whose message names the tool, never the body.
 */
export function toolAnswerOf(toolId: string, body: Buffer, contentType: string | undefined): unknown {
  if (body.length === 0) return null;
  const text = body.toString('utf8');
  if (!contentType || !/[/+]json\b/i.test(contentType)) return text;
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new ResilienceError('transient', `upstream of tool '${toolId}' answered malformed JSON`);
  }
  if (jsonDepthExceeds(answer, MAX_JSON_DEPTH)) {
    throw new ResilienceError(
      'transient',
      `upstream of tool '${toolId}' answered JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  }
  return answer;
}

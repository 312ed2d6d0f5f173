import { DEFAULT_BREAKER_SETTINGS } from '../circuit-breaker';

/**
 * Breakers whose `maxResetTimeoutMs` is below their `resetTimeoutMs` once `breakers.default`
 * (and the built-in default) fills in what they leave out. The schema checks each mapping alone;
 * this checks them merged, so that the mistake is a config problem reported with the others, not
 * a RangeError when the breaker is built. A breaker is reported only if it sets one of the two
 * itself (otherwise `breakers.default` is, once), and not if it sets both (the schema does).
 */
export function breakerMergeProblems(document: Record<string, unknown>): string[] {
  const breakers = mapping(document.breakers);
  const defaults = mapping(breakers.default);
  const problems: string[] = [];
  const check = (path: string, own: Record<string, unknown>, inherited: Record<string, unknown>) => {
    const ownMax = numberIn(own.maxResetTimeoutMs);
    const ownReset = numberIn(own.resetTimeoutMs);
    if ((ownMax === undefined) === (ownReset === undefined)) return;
    const max = ownMax ?? numberIn(inherited.maxResetTimeoutMs);
    const reset = ownReset ?? numberIn(inherited.resetTimeoutMs) ?? DEFAULT_BREAKER_SETTINGS.resetTimeoutMs;
    if (max !== undefined && max < reset) {
      problems.push(`${path}.maxResetTimeoutMs: must be at least resetTimeoutMs (${reset}, with breakers.default)`);
    }
  };
  check('breakers.default', defaults, {});
  for (const [name, own] of Object.entries(breakers)) {
    if (name !== 'default') check(`breakers.${name}`, mapping(own), defaults);
  }
  for (const [id, tool] of Object.entries(mapping(document.tools))) {
    check(`tools.${id}.breaker`, mapping(mapping(tool).breaker), defaults);
  }
  for (const [route, definition] of Object.entries(mapping(mapping(document.llm).routes))) {
    check(`llm.routes.${route}.breaker`, mapping(mapping(definition).breaker), defaults);
  }
  return problems;
}

function mapping(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A number as written, or as an environment variable substituted it (a string of digits). */
function numberIn(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return Number(value);
  return undefined;
}

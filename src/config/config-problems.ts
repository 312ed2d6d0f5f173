import type { z } from 'zod';

const NOUNS: Record<string, string> = { object: 'a mapping', array: 'a list', record: 'a mapping' };

/** Where a problem's value came from, when not straight from the file. */
export interface ProblemSources {
  /** Key paths whose whole value was an unset environment variable. */
  unset: ReadonlyMap<string, string>;
  /** Key paths whose value an environment variable overrode (`server.port` by `PORT`), by path. */
  overridden: ReadonlyMap<string, string>;
}

/** Keys that were read once and are no more: where what they said goes now. */
const MOVED: ReadonlyMap<string, string> = new Map([
  [
    'budgets.prices',
    "LLM prices are llm.prices (USD per million tokens, by provider/model); a tool's price is its costUsd",
  ],
]);

/** One line per problem: `key.path: rule`, saying which variable it came from if one did. */
export function describeIssue(issue: z.core.$ZodIssue, sources: ProblemSources): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const path = pathOf([...issue.path, key]);
      const moved = MOVED.get(path);
      return moved ? `${path}: unknown key (${moved})` : `${path}: unknown key`;
    });
  }
  const at = pathOf(issue.path);
  return [`${at}: ${ruleOf(issue)}${sourceOf(at, sources)}`];
}

function ruleOf(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_key':
      return `invalid name: ${issue.issues[0]?.message ?? 'not allowed'}`;
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      if (NOUNS[issue.expected]) return `must be ${NOUNS[issue.expected]}`;
      if (issue.message.startsWith('Invalid input')) return `must be a ${issue.expected}`;
      return issue.message;
    case 'invalid_union': {
      // A discriminated union (a tool, the store) whose `kind` is missing.
      const discriminator = (issue as { discriminator?: string }).discriminator;
      if (
        discriminator &&
        isMapping(issue.input) &&
        (issue.input as Record<string, unknown>)[discriminator] === undefined
      ) {
        return 'is required';
      }
      return issue.message;
    }
    default:
      return issue.message;
  }
}

function sourceOf(at: string, sources: ProblemSources): string {
  const variable = sources.unset.get(at);
  if (variable) return ` (environment variable ${variable} is not set)`;
  const override = sources.overridden.get(at);
  if (override) return ` (from ${override})`;
  return '';
}

function pathOf(path: PropertyKey[]): string {
  return path.map(String).join('.') || '(root)';
}

function isMapping(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

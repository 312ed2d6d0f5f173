import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { z } from 'zod';
import { type BulkheadConfig, configSchema } from './config.schema';
import { type Environment, substituteEnv } from './env-substitution';

export type ConfigResult = { ok: true; config: BulkheadConfig } | { ok: false; problems: string[] };

/** Where the config file is: `BULKHEAD_CONFIG`, else config/default.yaml. */
export function configPath(env: Environment = process.env): string {
  return env.BULKHEAD_CONFIG || 'config/default.yaml';
}

/** Reads, substitutes and validates a config file; never throws. */
export function loadConfigFile(path: string, env: Environment = process.env): ConfigResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, problems: [`${path}: cannot read the config file (${(error as NodeJS.ErrnoException).code})`] };
  }
  let document: unknown;
  try {
    document = parseYaml(text, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    return { ok: false, problems: [`${path}: not valid YAML: ${(error as Error).message.split('\n')[0]}`] };
  }
  return parseConfig(document ?? {}, env);
}

/**
 * Validates a parsed config document: `${ENV}` substitution, the `PORT` override, then the
 * schema. Every problem is one line naming its key path and the rule it breaks.
 */
export function parseConfig(document: unknown, env: Environment = process.env): ConfigResult {
  const problems: string[] = [];
  const substituted = substituteEnv(document, env, problems);
  if (problems.length > 0) return { ok: false, problems };
  const withPort = env.PORT ? overridePort(substituted, env.PORT) : substituted;
  const result = configSchema.safeParse(withPort, { reportInput: true });
  if (!result.success) return { ok: false, problems: result.error.issues.flatMap(describeIssue) };
  return { ok: true, config: result.data };
}

function overridePort(document: unknown, port: string): unknown {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return document;
  const root = document as Record<string, unknown>;
  const server = root.server && typeof root.server === 'object' ? root.server : {};
  return { ...root, server: { ...server, port } };
}

const NOUNS: Record<string, string> = { object: 'a mapping', array: 'a list', record: 'a mapping' };

function describeIssue(issue: z.core.$ZodIssue): string[] {
  const at = (path: PropertyKey[]) => path.map(String).join('.') || '(root)';
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => `${at([...issue.path, key])}: unknown key`);
    case 'invalid_key':
      return [`${at(issue.path)}: invalid name: ${issue.issues[0]?.message ?? 'not allowed'}`];
    case 'invalid_type':
      if (issue.input === undefined) return [`${at(issue.path)}: is required`];
      return [`${at(issue.path)}: ${issue.message.startsWith('Invalid input') ? `must be ${NOUNS[issue.expected] ?? `a ${issue.expected}`}` : issue.message}`];
    default:
      return [`${at(issue.path)}: ${issue.message}`];
  }
}

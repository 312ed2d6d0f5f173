import { readFileSync } from 'node:fs';
import { isScalar, LineCounter, parseDocument, visit } from 'yaml';
import { type BulkheadConfig, configSchema } from './config.schema';
import { describeIssue, type ProblemSources } from './config-problems';
import { crossReferenceProblems } from './cross-references';
import { type Environment, type SubstitutionReport, substituteEnv } from './env-substitution';

export type ConfigResult = { ok: true; config: BulkheadConfig } | { ok: false; problems: string[] };

/** Where the config file is: `BULKHEAD_CONFIG`, else config/default.yaml. */
export function configPath(env: Environment = process.env): string {
  return env.BULKHEAD_CONFIG || 'config/default.yaml';
}

/** A config with problems: one line each, naming the key path and the rule it breaks. */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`invalid config ${source}\n${problems.join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** The validated config, or a {@link ConfigError} listing every problem. */
export function configOrThrow(result: ConfigResult, source: string): BulkheadConfig {
  if (!result.ok) throw new ConfigError(source, result.problems);
  return result.config;
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
    document = parseYamlWithUniqueKeys(text);
  } catch (error) {
    const first = (error as Error).message.split('\n')[0].replace(/:\s*$/, '');
    return { ok: false, problems: [`${path}: not valid YAML: ${first}`] };
  }
  return parseConfig(document ?? {}, env);
}

/**
 * YAML with every mapping's keys unique. The `yaml` package's own check (`uniqueKeys: true`)
 * compares each key with every other, which a config with 10,000 tenants turns into seconds;
 * this one keeps a set per mapping.
 */
function parseYamlWithUniqueKeys(text: string): unknown {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: false, lineCounter });
  if (document.errors.length > 0) throw document.errors[0];
  visit(document, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        const name = isScalar(key) ? key.value : key;
        if (!seen.has(name)) {
          seen.add(name);
          continue;
        }
        const at = isScalar(key) && key.range ? lineCounter.linePos(key.range[0]) : undefined;
        throw new Error(`Map keys must be unique${at ? ` at line ${at.line}, column ${at.col}` : ''}`);
      }
    },
  });
  return document.toJS();
}

/**
 * The `server` keys an environment variable overrides, by variable: what a platform or a
 * developer sets per process without another file.
 */
const SERVER_OVERRIDES: ReadonlyArray<[variable: string, key: string]> = [
  ['PORT', 'port'],
  // 0 starts at once, without the warm-up (tests that start many services, a quick local try).
  ['BULKHEAD_WARM_UP_MS', 'warmUpMs'],
];

/**
 * Validates a parsed config document: `${ENV}` substitution, the environment's overrides of
 * `server` keys (`PORT`, `BULKHEAD_WARM_UP_MS`), then the schema. Every problem is one line
 * naming its key path and the rule it breaks.
 */
export function parseConfig(document: unknown, env: Environment = process.env): ConfigResult {
  const report: SubstitutionReport = { problems: [], failed: new Set(), unset: new Map() };
  const substituted = substituteEnv(document, env, report);
  const overrides = canOverrideServer(substituted)
    ? SERVER_OVERRIDES.filter(([variable]) => Boolean(env[variable]))
    : [];
  const overridden = new Map(overrides.map(([variable, key]) => [`server.${key}`, variable]));
  const withOverrides =
    overrides.length === 0
      ? substituted
      : overrideServer(
          substituted as Record<string, unknown>,
          Object.fromEntries(overrides.map(([variable, key]) => [key, env[variable]])),
        );
  return validate(withOverrides, report.problems, { unset: report.unset, overridden }, report.failed, env);
}

/**
 * Validates options given in code (`BulkheadModule.forRoot`) as the file would be, with no
 * `${ENV}` substitution and no environment overrides: the same defaults, the same one line per problem. `env`
 * is read only for what needs its consent (`BULKHEAD_ALLOW_CHAOS`).
 */
export function validateConfig(document: unknown, env: Environment = process.env): ConfigResult {
  return validate(document, [], { unset: new Map(), overridden: new Map() }, new Set(), env);
}

function validate(
  document: unknown,
  earlier: string[],
  sources: ProblemSources,
  reported: ReadonlySet<string>,
  env: Environment,
): ConfigResult {
  const result = configSchema.safeParse(document, { reportInput: true });
  const problems = [...earlier];
  if (!result.success) {
    const issues = result.error.issues.filter((issue) => !reported.has(issue.path.map(String).join('.')));
    problems.push(...issues.flatMap((issue) => describeIssue(issue, sources)));
  }
  problems.push(...crossReferenceProblems(document, env));
  if (problems.length > 0) return { ok: false, problems: [...new Set(problems)] };
  return { ok: true, config: result.data! };
}

/** The environment overrides `server` keys only where the file's `server` is a mapping (or absent). */
function canOverrideServer(document: unknown): boolean {
  if (document === null || typeof document !== 'object' || Array.isArray(document)) return false;
  const server = (document as Record<string, unknown>).server;
  return server === undefined || (typeof server === 'object' && server !== null && !Array.isArray(server));
}

function overrideServer(root: Record<string, unknown>, values: Record<string, unknown>): unknown {
  return { ...root, server: { ...(root.server as object | undefined), ...values } };
}

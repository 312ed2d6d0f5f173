const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;
const ANY = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Environment = Readonly<Record<string, string | undefined>>;

/** What substitution found wrong or missing, by key path. */
export interface SubstitutionReport {
  /** One line per problem: an unset variable inside a longer string. */
  problems: string[];
  /** Key paths of those problems, whose values are not worth validating further. */
  failed: Set<string>;
  /** Key paths left out because their whole value was an unset variable, with its name. */
  unset: Map<string, string>;
}

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string value of a parsed YAML document
 * (keys are left alone). Substitution happens after parsing, so a value can never inject
 * YAML structure.
 *
 * - A string that is exactly one `${VAR}` whose variable is unset or empty (and has no
 *   default) disappears, as if the key were not written: `adminToken: ${BULKHEAD_ADMIN_TOKEN}`
 *   leaves admin routes off when the variable is not set.
 * - `${VAR:-default}` takes the default when VAR is unset or empty, as in the shell.
 * - Inside a longer string an unset variable is a problem, reported once with its key path.
 * - `$${` stands for a literal `${`.
 */
export function substituteEnv(
  value: unknown,
  env: Environment,
  report: SubstitutionReport = { problems: [], failed: new Set(), unset: new Map() },
  path: string[] = [],
): unknown {
  if (typeof value === 'string') return substituteString(value, env, report, path);
  if (Array.isArray(value)) {
    return value
      .map((item, index) => substituteEnv(item, env, report, [...path, String(index)]))
      .filter((item) => item !== undefined);
  }
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const substituted = substituteEnv(item, env, report, [...path, key]);
      if (substituted !== undefined) result[key] = substituted;
    }
    return result;
  }
  return value;
}

function substituteString(
  value: string,
  env: Environment,
  report: SubstitutionReport,
  path: string[],
): string | undefined {
  const whole = WHOLE.exec(value);
  if (whole) {
    const replacement = env[whole[1]] || whole[2] || undefined;
    if (replacement === undefined) report.unset.set(path.join('.'), whole[1]);
    return replacement;
  }
  const missing = new Set<string>();
  const result = value.replace(ANY, (_match, variable: string | undefined, fallback: string | undefined) => {
    if (variable === undefined) return '${';
    const replacement = fallback === undefined ? env[variable] : env[variable] || fallback;
    if (replacement === undefined) missing.add(variable);
    return replacement ?? '';
  });
  const at = path.join('.') || '(root)';
  for (const variable of missing) report.problems.push(`${at}: environment variable ${variable} is not set`);
  if (missing.size > 0) report.failed.add(at);
  return result;
}

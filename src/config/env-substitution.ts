const WHOLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/;
const ANY = /\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Replaces `${VAR}` and `${VAR:-default}` in every string of a parsed YAML document.
 * Substitution happens after parsing, so a value can never inject YAML structure.
 *
 * - A string that is exactly one `${VAR}` whose variable is unset or empty (and has no
 *   default) disappears, as if the key were not written: `adminToken: ${BULKHEAD_ADMIN_TOKEN}`
 *   leaves admin routes off when the variable is not set.
 * - Inside a longer string an unset variable is a problem, reported with its key path.
 * - `$${` stands for a literal `${`.
 */
export function substituteEnv(value: unknown, env: Environment, problems: string[], path: string[] = []): unknown {
  if (typeof value === 'string') return substituteString(value, env, problems, path);
  if (Array.isArray(value)) {
    return value
      .map((item, index) => substituteEnv(item, env, problems, [...path, String(index)]))
      .filter((item) => item !== undefined);
  }
  if (value !== null && typeof value === 'object') {
    const result: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const substituted = substituteEnv(item, env, problems, [...path, key]);
      if (substituted !== undefined) result[key] = substituted;
    }
    return result;
  }
  return value;
}

function substituteString(value: string, env: Environment, problems: string[], path: string[]): string | undefined {
  const whole = WHOLE.exec(value);
  if (whole) return env[whole[1]] || whole[2] || undefined;
  return value.replace(ANY, (match, variable: string | undefined, fallback: string | undefined) => {
    if (variable === undefined) return '${';
    const replacement = env[variable] ?? fallback;
    if (replacement === undefined) {
      problems.push(`${path.join('.') || '(root)'}: environment variable ${variable} is not set`);
      return '';
    }
    return replacement;
  });
}

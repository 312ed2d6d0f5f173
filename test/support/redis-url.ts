/** The Redis the Redis suites use unless REDIS_URL names another. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** `url` with its password replaced by `***`: what a message may show of it. */
export function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/** The tenant of callers without an API key, when the config allows them; never a configured tenant. */
export const ANONYMOUS_TENANT = 'anonymous';

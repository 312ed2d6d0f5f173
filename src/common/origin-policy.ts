/** The host names of the local machine: a page served from one of them runs on the user's own machine. */
const LOOPBACK_HOSTNAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** What a route reachable from a browser accepts besides loopback pages. */
export interface OriginPolicyOptions {
  /**
   * Origins of browser pages allowed to call, beside loopback ones (`http(s)://localhost`,
   * `127.0.0.1`, `[::1]`, any port), exactly as a browser sends them (`https://app.example.com`,
   * `http://tools.internal:8080`); `'*'` allows every origin.
   */
  readonly allowedOrigins: readonly string[];
  /**
   * Host names (no port) the service is reached by, beside loopback ones. Empty: the `Host`
   * header is not checked. Listed: any other `Host` is refused, and a page served from a listed
   * host may call the service (its own origin).
   */
  readonly allowedHosts: readonly string[];
}

/** The headers of a request the policy reads. */
export interface OriginHeaders {
  readonly origin?: string | string[];
  readonly host?: string | string[];
}

/**
 * Whether a browser page may call a route (the MCP specification's DNS-rebinding rule). A request
 * without `Origin` is not a browser page's and passes: agent runtimes, SDKs and curl send none.
 * An `Origin` passes when it is a loopback page's, listed, or the service's own; anything else,
 * including one that does not parse (two joined, `null` from a sandboxed frame), is refused. The
 * service's own origin is the one its `Host` names, but only when that host is one the service
 * knows it is reached by (loopback, or `allowedHosts`): in a rebinding attack `Host` and `Origin`
 * both name the attacker's domain, so a `Host` taken on trust would wave the attack through.
 */
export class OriginPolicy {
  private readonly anyOrigin: boolean;
  private readonly origins: ReadonlySet<string>;
  private readonly hosts: ReadonlySet<string>;

  constructor(options: OriginPolicyOptions) {
    this.anyOrigin = options.allowedOrigins.includes('*');
    this.origins = new Set(options.allowedOrigins.filter((origin) => origin !== '*').map(canonicalOrigin));
    this.hosts = new Set(options.allowedHosts.map((host) => host.toLowerCase()));
  }

  /** Why the request is refused (a sentence naming no header value), or undefined when it may go on. */
  refusal(headers: OriginHeaders): string | undefined {
    const host = parsedHost(headers.host);
    const knownHost = host !== undefined && (LOOPBACK_HOSTNAMES.has(host.hostname) || this.hosts.has(host.hostname));
    if (this.hosts.size > 0 && !knownHost) return 'the request names a Host this service is not reached by';
    const origin = headers.origin;
    if (origin === undefined || this.anyOrigin) return undefined;
    const page = typeof origin === 'string' ? parsedOrigin(origin) : undefined;
    if (page === undefined) return 'the request carries an Origin that is not one origin';
    if (LOOPBACK_HOSTNAMES.has(page.hostname) || this.origins.has(page.origin)) return undefined;
    if (knownHost && page.host === host.host) return undefined;
    return 'the request comes from a web page whose origin is not allowed';
  }
}

/** Whether `value` is an origin the options may list: `http(s)://host[:port]` in any case, nothing more; or `'*'`. */
export function isOriginText(value: string): boolean {
  if (value === '*') return true;
  try {
    const url = new URL(value);
    const web = url.protocol === 'http:' || url.protocol === 'https:';
    return web && url.href === `${url.origin}/` && !value.endsWith('/');
  } catch {
    return false;
  }
}

/** An origin as browsers send it: scheme and host lower-case, no default port, no path. */
function canonicalOrigin(value: string): string {
  return new URL(value).origin;
}

/** The origin in `value`, when `value` is exactly one serialized http(s) origin. */
function parsedOrigin(value: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  // A path, a query, credentials or a second origin appended make it something else than an origin.
  return url.origin === value ? url : undefined;
}

/**
 * A `Host` header as a URL gives it: `hostname` without the port, lower-case, IPv6 in brackets;
 * `host` with a port other than 80. Undefined when absent or not one host.
 */
function parsedHost(value: string | string[] | undefined): { host: string; hostname: string } | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const { host, hostname, pathname, username, password, search, hash } = new URL(`http://${value}`);
    return pathname === '/' && !username && !password && !search && !hash ? { host, hostname } : undefined;
  } catch {
    return undefined;
  }
}

import { isIP } from 'node:net';
import type { EgressPolicy } from './egress-policy';

/** What the egress policy will refuse about a configured URL, and the setting that would open it. */
export interface EgressRefusal {
  /** Why, naming the host as the URL wrote it (never its path, query or credentials). */
  reason: string;
  /** The config key to set: `containment.egress.allowHosts` or `containment.egress.allowPrivateCidrs`. */
  setting: string;
}

/**
 * The loopback addresses `localhost` resolves to (RFC 6761: always loopback; whether ::1 is among
 * them depends on the machine, and one denied address refuses the name).
 */
const LOCALHOST_ADDRESSES = ['127.0.0.1', '::1'];

/**
 * Asks the policy, without DNS and without connecting, whether it will refuse `url`: its scheme,
 * its host against allowHosts, and its address when the URL says it (an IP literal, or
 * `localhost`). A name that only DNS can place (a private `ollama.internal`) is not judged here:
 * the connector still refuses it at connect time. For start-up warnings, never for decisions.
 */
export function egressRefusalOf(policy: EgressPolicy, url: URL): EgressRefusal | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { reason: `scheme ${url.protocol} is not http: or https:`, setting: 'the URL itself' };
  }
  const host = url.hostname;
  if (!policy.allowsHost(host)) {
    return { reason: `host '${host}' is not allowed`, setting: 'containment.egress.allowHosts' };
  }
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const addresses = isIP(bare) !== 0 ? [bare] : isLocalhost(bare) ? LOCALHOST_ADDRESSES : [];
  const denied = addresses.filter((address) => !policy.allowsAddress(address));
  if (denied.length === 0) return undefined;
  const ranges = denied.map((address) => (isIP(address) === 4 ? `${address}/32` : `${address}/128`)).join("', '");
  return {
    reason: `host '${host}' is a private, loopback, link-local or reserved address (add '${ranges}')`,
    setting: 'containment.egress.allowPrivateCidrs',
  };
}

function isLocalhost(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

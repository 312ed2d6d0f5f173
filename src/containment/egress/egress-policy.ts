import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ResilienceError } from '../../common';

/** Where outbound HTTP may go (`containment.egress` in the config, docs/http-contract.md section 7). */
export interface EgressRules {
  /** Hosts a URL may name, matched exactly (case and a trailing dot aside); `*` allows any. */
  allowHosts: string[];
  /** CIDRs opened despite being private, loopback, link-local and so on (`127.0.0.1/32`). */
  allowPrivateCidrs: string[];
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** IPv4-compatible addresses (`::a.b.c.d`, deprecated); ipaddr.js calls them unicast. */
const IPV4_COMPATIBLE: Cidr = [ipaddr.IPv6.parse('::'), 96];
const SIX_TO_FOUR: Cidr = [ipaddr.IPv6.parse('2002::'), 16];
const NAT64: Cidr = [ipaddr.IPv6.parse('64:ff9b::'), 96];
const TEREDO: Cidr = [ipaddr.IPv6.parse('2001::'), 32];

/** Why a destination was refused. */
export type EgressDenial = 'scheme' | 'host' | 'address';

/**
 * The egress error, saying what to configure. It names the host as the URL wrote it (from the
 * config or the app's own code, never from an API caller) and never an address the name
 * resolved to, nor the URL's path, query or credentials.
 */
export function egressDenied(denial: EgressDenial = 'host', hostname = ''): ResilienceError {
  const host = hostname.slice(0, 253);
  const message =
    denial === 'scheme'
      ? 'only http: and https: destinations are allowed'
      : denial === 'host'
        ? `host '${host}' is not in containment.egress.allowHosts`
        : `host '${host}' resolves to a private, loopback, link-local or reserved address: ` +
          'allow its range in containment.egress.allowPrivateCidrs';
  return new ResilienceError('egress_denied', message);
}

/**
 * Decides which hosts a URL may name and which addresses a connection may reach. Addresses are
 * denied unless ipaddr.js calls them unicast (public) or an allowed CIDR covers them; IPv4
 * embedded in IPv6 is unwrapped and judged as IPv4. Does no DNS: the connector resolves and
 * asks about every address.
 */
export class EgressPolicy {
  private readonly anyHost: boolean;
  private readonly hosts: ReadonlySet<string>;
  private readonly cidrs: readonly Cidr[];

  /** Throws RangeError on a CIDR it cannot parse (the message names the CIDR). */
  constructor(rules: EgressRules) {
    this.anyHost = rules.allowHosts.includes('*');
    this.hosts = new Set(rules.allowHosts.filter((host) => host !== '*').map(normaliseHost));
    this.cidrs = rules.allowPrivateCidrs.map(parseCidr);
  }

  /** Throws `egress_denied` unless the scheme is http: or https: and the host matches allowHosts. No DNS. */
  checkUrl(url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw egressDenied('scheme');
    if (!this.allowsHost(url.hostname)) throw egressDenied('host', url.hostname);
  }

  /** Whether the host (a name or an IP literal, as in URL.hostname; brackets allowed) matches allowHosts. */
  allowsHost(hostname: string): boolean {
    const host = normaliseHost(hostname);
    if (host === '') return false;
    return this.anyHost || this.hosts.has(host);
  }

  /** Whether a connection to this IP address (IPv4 or IPv6 text, no brackets) is allowed. */
  allowsAddress(address: string): boolean {
    if (isIP(address) === 0) return false;
    let parsed: ipaddr.IPv4 | ipaddr.IPv6;
    try {
      parsed = ipaddr.parse(address);
    } catch {
      return false;
    }
    if (parsed.kind() === 'ipv4') return this.allowsIPv4(parsed as ipaddr.IPv4);
    return this.allowsIPv6(parsed as ipaddr.IPv6);
  }

  private allowsIPv4(address: ipaddr.IPv4): boolean {
    return this.opened(address) || address.range() === 'unicast';
  }

  private allowsIPv6(address: ipaddr.IPv6): boolean {
    if (this.opened(address)) return true;
    // An IPv4 CIDR covers the mapped form of its addresses: the kernel connects to the IPv4 one.
    if (address.isIPv4MappedAddress()) return this.allowsIPv4(address.toIPv4Address());
    // 6to4 and NAT64 reach their IPv4 through a relay; only the built-in ranges judge it, so
    // opening 127.0.0.1/32 does not open 2002:7f00:1:: (list an IPv6 CIDR for that).
    if (address.match(SIX_TO_FOUR)) return embeddedIPv4(address.parts[1], address.parts[2]).range() === 'unicast';
    if (address.match(NAT64)) return embeddedIPv4(address.parts[6], address.parts[7]).range() === 'unicast';
    // Teredo's embedded address is the server's, obfuscated; nothing legitimate needs it.
    if (address.match(TEREDO)) return false;
    if (address.match(IPV4_COMPATIBLE)) return false;
    return address.range() === 'unicast';
  }

  private opened(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.cidrs.some((cidr) => cidr[0].kind() === address.kind() && address.match(cidr));
  }
}

/** Lower case, brackets and one trailing dot removed, IP literals in canonical form. */
function normaliseHost(hostname: string): string {
  let host = hostname.trim().toLowerCase();
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (host.endsWith('.')) host = host.slice(0, -1);
  return isIP(host) === 0 ? host : ipaddr.parse(host).toString();
}

function parseCidr(cidr: string): Cidr {
  try {
    return ipaddr.parseCIDR(cidr);
  } catch {
    throw new RangeError(`egress.allowPrivateCidrs: '${cidr}' is not a CIDR (expected e.g. 10.0.0.0/8 or fd00::/8)`);
  }
}

function embeddedIPv4(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

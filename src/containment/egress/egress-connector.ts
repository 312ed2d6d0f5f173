import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, isIPv4 } from 'node:net';
import { buildConnector, errors } from 'undici';
import { egressDenied, type EgressPolicy } from './egress-policy';

/** Resolves a host name to every address it has. */
export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: 4 | 6 }>>;

export interface EgressConnectorOptions {
  /** How long resolving and connecting (TCP, then TLS) may each take, in milliseconds. */
  timeoutMs: number;
  /** @default dns.promises.lookup(host, { all: true, verbatim: true }) */
  lookup?: Lookup;
}

const systemLookup: Lookup = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
};

/**
 * An undici connector that enforces the egress policy at connect time (docs/pitfalls.md #3): pass it
 * as `new Agent({ connect: egressConnector(policy, options) })`. It refuses other schemes and
 * hosts outside allowHosts, checks an IP literal before connecting, resolves a name itself and
 * refuses it if ANY address is denied, connects to the checked address (so nothing resolves
 * again between check and connect), and checks the socket's peer once more. Denials fail with
 * `egress_denied`; lookup failures and timeouts pass through as network errors. Never logs.
 */
export function egressConnector(policy: EgressPolicy, options: EgressConnectorOptions): buildConnector.connector {
  const connect = buildConnector({ timeout: options.timeoutMs });
  const lookup = options.lookup ?? systemLookup;

  return (connectOptions, callback) => {
    const { hostname, protocol } = connectOptions;
    if (protocol !== 'http:' && protocol !== 'https:') {
      callback(egressDenied('scheme'), null);
      return;
    }
    if (!policy.allowsHost(hostname)) {
      callback(egressDenied('host', hostname), null);
      return;
    }
    const literal = isIP(hostname) !== 0;

    const dial = (address: string): void => {
      try {
        connect(
          {
            ...connectOptions,
            hostname: address,
            // SNI and certificate checks use the name the caller asked for; never an IP (RFC 6066).
            servername: connectOptions.servername || (literal ? undefined : hostname),
          },
          (error, socket) => {
            if (error !== null) return callback(error, null);
            if (!allowsPeer(policy, socket.remoteAddress)) {
              socket.destroy();
              return callback(egressDenied('address', hostname), null);
            }
            callback(null, socket);
          },
        );
      } catch (error) {
        callback(error as Error, null);
      }
    };

    if (literal) {
      if (policy.allowsAddress(hostname)) dial(hostname);
      else callback(egressDenied('address', hostname), null);
      return;
    }
    withTimeout(() => lookup(hostname), options.timeoutMs).then(
      (answers) => {
        // One denied answer refuses the name: a [public, 127.0.0.1] answer must not fall back to loopback.
        if (answers.length === 0 || !answers.every(({ address }) => policy.allowsAddress(address))) {
          callback(egressDenied('address', hostname), null);
          return;
        }
        dial(answers[0].address);
      },
      (error: Error) => callback(error, null),
    );
  };
}

/**
 * Whether a connected socket's peer (`socket.remoteAddress`) is allowed; IPv4-mapped forms
 * (`::ffff:127.0.0.1`) are judged as their IPv4. No address (the socket is gone) is not allowed.
 */
export function allowsPeer(policy: EgressPolicy, remoteAddress: string | undefined): boolean {
  if (remoteAddress === undefined) return false;
  const mapped = /^::ffff:(.+)$/i.exec(remoteAddress);
  const address = mapped !== null && isIPv4(mapped[1]) ? mapped[1] : remoteAddress;
  return policy.allowsAddress(address);
}

/** A lookup that hangs would hold the connection slot forever: bound it like the connect itself. */
function withTimeout<T>(start: () => Promise<T>, timeoutMs: number): Promise<T> {
  // A lookup that throws instead of rejecting still fails only this connection.
  const promise = new Promise<T>((resolve) => resolve(start()));
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new errors.ConnectTimeoutError('Connect Timeout Error (lookup)')), timeoutMs);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

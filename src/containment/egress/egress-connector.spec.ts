import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { Agent, type Dispatcher, errors, request } from 'undici';
import { Upstream } from '../../../test/support/upstream';
import { isResilienceError } from '../../common';
import { allowsPeer, egressConnector, type Lookup } from './egress-connector';
import { EgressPolicy, type EgressRules } from './egress-policy';

/** A raw TCP listener that counts connections and keeps the first bytes it receives. */
class Listener {
  connections = 0;
  readonly closed: Promise<void>[] = [];
  /** The first bytes the first connection sent. */
  readonly firstChunk: Promise<Buffer>;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    let onFirstChunk: (chunk: Buffer) => void = () => undefined;
    this.firstChunk = new Promise((resolve) => (onFirstChunk = resolve));
    server.on('connection', (socket) => {
      this.connections++;
      this.sockets.add(socket);
      this.closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
      socket.on('error', () => undefined);
      // Hang up after the first bytes, so a request that got through fails fast instead of hanging.
      socket.once('data', (chunk: Buffer) => {
        onFirstChunk(chunk);
        socket.destroy();
      });
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens on `host`; `port` 0 picks one. Undefined when the address is not available (no IPv6). */
  static async start(host: string, port = 0): Promise<Listener | undefined> {
    const server = createServer();
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, host, () => resolve(true));
    });
    return listening ? new Listener(server) : undefined;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

type Answers = Array<{ address: string; family: 4 | 6 }>;

/** A lookup that answers from a table and records every name it was asked about. Never real DNS. */
function stubLookup(table: Record<string, Answers>): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string): Promise<Answers> => {
    calls.push(hostname);
    const answers = table[hostname];
    if (answers === undefined)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answers;
  };
  return Object.assign(lookup, { calls });
}

const v4 = (address: string) => ({ address, family: 4 as const });
const v6 = (address: string) => ({ address, family: 6 as const });

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  while (closers.length > 0) await closers.pop()!();
});

function agentFor(rules: EgressRules, lookup: Lookup): Agent {
  const agent = new Agent({ connect: egressConnector(new EgressPolicy(rules), { timeoutMs: 2000, lookup }) });
  closers.push(() => agent.destroy());
  return agent;
}

async function rejection(url: string, dispatcher: Dispatcher): Promise<unknown> {
  try {
    const response = await request(url, { dispatcher });
    await response.body.dump();
  } catch (error) {
    return error;
  }
  throw new Error(`expected ${url} to be refused`);
}

function expectEgressDenied(error: unknown): void {
  expect(isResilienceError(error)).toBe(true);
  expect(error).toMatchObject({ kind: 'egress_denied', status: 403 });
}

describe('egressConnector', () => {
  it('relies on undici passing the connector error to request() unchanged', async () => {
    const sentinel = new Error('from the connector');
    const agent = new Agent({ connect: (_options, callback) => callback(sentinel, null) });
    closers.push(() => agent.destroy());
    await expect(request('http://api.test/', { dispatcher: agent })).rejects.toBe(sentinel);
  });

  describe('SSRF table: nothing reaches the local listener', () => {
    let listener4: Listener;
    let listener6: Listener | undefined;
    const lookup = stubLookup({
      localhost: [v4('127.0.0.1')],
      'localhost6.test': [v6('::1')],
      'mapped.test': [v6('::ffff:127.0.0.1')],
      'mixed.test': [v4('8.8.8.8'), v4('127.0.0.1')],
      'mixed-first.test': [v4('127.0.0.1'), v4('8.8.8.8')],
      'mixed6.test': [v6('2606:4700:4700::1111'), v6('::1')],
      'metadata.test': [v4('169.254.169.254')],
      'metadata6.test': [v6('fd00:ec2::254')],
      'private.test': [v4('10.0.0.1')],
      'nothing.test': [],
    });

    beforeAll(async () => {
      listener4 = (await Listener.start('127.0.0.1'))!;
      // The same port on ::1 when IPv6 is available, so one P covers both families.
      listener6 = await Listener.start('::1', listener4.port);
    });

    afterAll(async () => {
      await listener4.close();
      await listener6?.close();
    });

    beforeEach(() => {
      lookup.calls.length = 0;
      listener4.connections = 0;
      if (listener6) listener6.connections = 0;
    });

    it.each([
      ['http://127.0.0.1:P/', 'IPv4 loopback'],
      ['http://2130706433:P/', 'decimal IPv4'],
      ['http://0x7f000001:P/', 'hex IPv4'],
      ['http://0177.0.0.1:P/', 'octal IPv4'],
      ['http://127.1:P/', 'short IPv4'],
      ['https://127.0.0.1:P/', 'IPv4 loopback over https'],
      ['http://[::1]:P/', 'IPv6 loopback'],
      ['http://[::ffff:127.0.0.1]:P/', 'IPv4-mapped loopback'],
      ['http://[::ffff:7f00:1]:P/', 'IPv4-mapped loopback, hex'],
      ['http://[0:0:0:0:0:ffff:7f00:1]:P/', 'IPv4-mapped loopback, written out'],
      ['http://0.0.0.0:P/', 'IPv4 unspecified'],
      ['http://0:P/', 'IPv4 unspecified, short'],
      ['http://[::]:P/', 'IPv6 unspecified'],
      ['http://[2002:7f00:1::]:P/', '6to4 of loopback'],
      ['http://[64:ff9b::7f00:1]:P/', 'NAT64 of loopback'],
      ['http://169.254.169.254:P/', 'metadata literal'],
    ])('refuses the literal %s (%s) without a lookup', async (template) => {
      const url = template.replace('P', String(listener4.port));
      const error = await rejection(url, agentFor({ allowHosts: ['*'], allowPrivateCidrs: [] }, lookup));
      expect(listener4.connections + (listener6?.connections ?? 0)).toBe(0);
      expectEgressDenied(error);
      expect(lookup.calls).toEqual([]);
    });

    it.each([
      ['localhost', '127.0.0.1'],
      ['localhost6.test', '::1'],
      ['mapped.test', '::ffff:127.0.0.1'],
      ['mixed.test', '[8.8.8.8, 127.0.0.1]'],
      ['mixed-first.test', '[127.0.0.1, 8.8.8.8]'],
      ['mixed6.test', '[2606:4700:4700::1111, ::1]'],
      ['metadata.test', '169.254.169.254'],
      ['metadata6.test', 'fd00:ec2::254'],
      ['private.test', '10.0.0.1'],
      ['nothing.test', 'no address'],
    ])('refuses the name %s answering %s', async (name) => {
      const url = `http://${name}:${listener4.port}/`;
      const error = await rejection(url, agentFor({ allowHosts: ['*'], allowPrivateCidrs: [] }, lookup));
      expect(listener4.connections + (listener6?.connections ?? 0)).toBe(0);
      expectEgressDenied(error);
      expect(lookup.calls).toEqual([name]);
    });

    it('passes a lookup failure through as it is', async () => {
      const error = await rejection(
        `http://unknown.test:${listener4.port}/`,
        agentFor({ allowHosts: ['*'], allowPrivateCidrs: [] }, lookup),
      );
      expect(isResilienceError(error)).toBe(false);
      expect(error).toMatchObject({ code: 'ENOTFOUND' });
      expect(listener4.connections).toBe(0);
    });
  });

  describe('allowed destinations', () => {
    let upstream: Upstream;

    beforeEach(async () => {
      upstream = await Upstream.start();
      closers.push(() => upstream.close());
    });

    it('reaches a loopback listener through an IP literal when allowPrivateCidrs opens it', async () => {
      const lookup = stubLookup({});
      const agent = agentFor({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] }, lookup);
      const response = await request(`http://127.0.0.1:${upstream.port}/hello`, { dispatcher: agent });
      await response.body.dump();
      expect(response.statusCode).toBe(200);
      expect(upstream.connections).toBe(1);
      expect(lookup.calls).toEqual([]);
    });

    it('reaches it through a name resolved to the opened address, keeping the Host header', async () => {
      const lookup = stubLookup({ 'service.test': [v4('127.0.0.1')] });
      const agent = agentFor({ allowHosts: ['service.test'], allowPrivateCidrs: ['127.0.0.1/32'] }, lookup);
      const response = await request(`http://service.test:${upstream.port}/hello`, { dispatcher: agent });
      await response.body.dump();
      expect(response.statusCode).toBe(200);
      expect(upstream.requests[0]?.headers.host).toBe(`service.test:${upstream.port}`);
      expect(lookup.calls).toEqual(['service.test']);
    });

    it('still refuses 127.0.0.2 and a mixed answer when only 127.0.0.1/32 is open', async () => {
      const lookup = stubLookup({ 'two.test': [v4('127.0.0.1'), v4('127.0.0.2')] });
      const agent = agentFor({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] }, lookup);
      expectEgressDenied(await rejection(`http://127.0.0.2:${upstream.port}/`, agent));
      expectEgressDenied(await rejection(`http://two.test:${upstream.port}/`, agent));
      expect(upstream.connections).toBe(0);
    });

    it('refuses a host outside allowHosts before any lookup', async () => {
      const lookup = stubLookup({ 'other.test': [v4('127.0.0.1')], 'api.test.': [v4('127.0.0.1')] });
      const agent = agentFor({ allowHosts: ['api.test'], allowPrivateCidrs: ['127.0.0.1/32'] }, lookup);
      expectEgressDenied(await rejection(`http://other.test:${upstream.port}/`, agent));
      expectEgressDenied(await rejection(`http://127.0.0.1:${upstream.port}/`, agent));
      expect(lookup.calls).toEqual([]);
      expect(upstream.connections).toBe(0);

      const response = await request(`http://API.test.:${upstream.port}/`, { dispatcher: agent });
      await response.body.dump();
      expect(response.statusCode).toBe(200);
      expect(lookup.calls).toEqual(['api.test.']);
    });
  });

  describe('called directly', () => {
    const open = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] });

    function connectOnce(
      connector: ReturnType<typeof egressConnector>,
      options: Parameters<ReturnType<typeof egressConnector>>[0],
    ): Promise<{ error: Error | null; socket: Socket | null }> {
      return new Promise((resolve) =>
        connector(options, (error, socket) => {
          socket?.destroy();
          resolve({ error, socket });
        }),
      );
    }

    it.each(['ftp:', 'file:', 'ws:', ''])('refuses the protocol %j', async (protocol) => {
      const lookup = stubLookup({ 'api.test': [v4('8.8.8.8')] });
      const connector = egressConnector(open, { timeoutMs: 2000, lookup });
      const { error } = await connectOnce(connector, { hostname: 'api.test', protocol, port: '80' });
      expectEgressDenied(error);
      expect(lookup.calls).toEqual([]);
    });

    it('sends the original name as TLS server name while connecting to the resolved address', async () => {
      const listener = (await Listener.start('127.0.0.1'))!;
      closers.push(() => listener.close());
      const lookup = stubLookup({ 'secure.test': [v4('127.0.0.1')] });
      const connector = egressConnector(open, { timeoutMs: 2000, lookup });
      const connected = connectOnce(connector, {
        hostname: 'secure.test',
        host: `secure.test:${listener.port}`,
        protocol: 'https:',
        port: String(listener.port),
      });
      // The listener speaks no TLS: read the ClientHello (SNI is in clear text), then hang up.
      const clientHello = await listener.firstChunk;
      expect(clientHello.includes(Buffer.from('secure.test'))).toBe(true);
      await listener.close();
      expect((await connected).error).not.toBeNull();
    });

    it('destroys the socket and refuses when the connected peer is not allowed', async () => {
      const listener = (await Listener.start('127.0.0.1'))!;
      closers.push(() => listener.close());
      const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: [] });
      // Passes the pre-connect check once, as a rebinding or a redirecting network would.
      jest.spyOn(policy, 'allowsAddress').mockReturnValueOnce(true);
      const connector = egressConnector(policy, { timeoutMs: 2000, lookup: stubLookup({}) });
      const { error, socket } = await connectOnce(connector, {
        hostname: '127.0.0.1',
        protocol: 'http:',
        port: String(listener.port),
      });
      expectEgressDenied(error);
      expect(socket).toBeNull();
      expect(listener.connections).toBe(1);
      await listener.closed[0];
    });

    it('fails only the connection when the lookup throws instead of rejecting', async () => {
      const thrown = new Error('lookup blew up');
      const lookup: Lookup = () => {
        throw thrown;
      };
      const connector = egressConnector(open, { timeoutMs: 2000, lookup });
      const { error } = await connectOnce(connector, { hostname: 'api.test', protocol: 'http:', port: '80' });
      expect(error).toBe(thrown);
    });

    it('times a lookup out with a connect timeout', async () => {
      jest.useFakeTimers();
      try {
        const connector = egressConnector(open, { timeoutMs: 500, lookup: () => new Promise(() => undefined) });
        const callback = jest.fn();
        connector({ hostname: 'slow.test', protocol: 'http:', port: '80' }, callback);
        await jest.advanceTimersByTimeAsync(499);
        expect(callback).not.toHaveBeenCalled();
        await jest.advanceTimersByTimeAsync(1);
        expect(callback).toHaveBeenCalledTimes(1);
        expect(callback.mock.calls[0][0]).toBeInstanceOf(errors.ConnectTimeoutError);
        expect(callback.mock.calls[0][1]).toBeNull();
      } finally {
        jest.useRealTimers();
      }
    });
  });

  describe('allowsPeer', () => {
    const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['10.1.2.3/32'] });

    it.each([
      ['8.8.8.8', true],
      ['::ffff:8.8.8.8', true],
      ['::FFFF:8.8.8.8', true],
      ['2606:4700:4700::1111', true],
      ['10.1.2.3', true],
      ['::ffff:10.1.2.3', true],
      ['127.0.0.1', false],
      ['::ffff:127.0.0.1', false],
      ['::ffff:7f00:1', false],
      ['::1', false],
      ['10.1.2.4', false],
      ['::ffff:169.254.169.254', false],
      ['', false],
      [undefined, false],
    ])('judges the peer %j as allowed: %s', (address, allowed) => {
      expect(allowsPeer(policy, address)).toBe(allowed);
    });
  });
});

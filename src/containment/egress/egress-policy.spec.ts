import { isResilienceError } from '../../common';
import { egressDenied, EgressPolicy } from './egress-policy';

const closed = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: [] });

describe('EgressPolicy', () => {
  describe('allowsAddress', () => {
    it.each([
      ['8.8.8.8', 'public IPv4'],
      ['1.1.1.1', 'public IPv4'],
      ['93.184.215.14', 'public IPv4'],
      ['100.63.255.255', 'just below CGNAT'],
      ['100.128.0.0', 'just above CGNAT'],
      ['172.15.255.255', 'just below 172.16/12'],
      ['172.32.0.0', 'just above 172.16/12'],
      ['2606:4700:4700::1111', 'public IPv6'],
      ['2001:4860:4860::8888', 'public IPv6 (2001:4860:: is not Teredo)'],
      ['::ffff:8.8.8.8', 'IPv4-mapped public'],
      ['::ffff:808:808', 'IPv4-mapped public, hex form'],
      ['2002:808:808::1', '6to4 of a public IPv4'],
      ['64:ff9b::808:808', 'NAT64 of a public IPv4'],
    ])('allows %s (%s)', (address) => {
      expect(closed.allowsAddress(address)).toBe(true);
    });

    it.each([
      ['127.0.0.1', 'IPv4 loopback'],
      ['127.255.255.254', 'IPv4 loopback'],
      ['10.0.0.1', 'private 10/8'],
      ['10.255.255.255', 'private 10/8'],
      ['172.16.0.1', 'private 172.16/12'],
      ['172.31.255.255', 'private 172.16/12'],
      ['192.168.1.1', 'private 192.168/16'],
      ['169.254.0.1', 'link-local'],
      ['169.254.169.254', 'cloud metadata'],
      ['100.64.0.1', 'CGNAT'],
      ['100.127.255.255', 'CGNAT'],
      ['0.0.0.0', 'unspecified'],
      ['0.1.2.3', 'unspecified 0/8'],
      ['255.255.255.255', 'broadcast'],
      ['224.0.0.1', 'multicast'],
      ['239.255.255.250', 'multicast'],
      ['192.0.2.1', 'reserved (TEST-NET-1)'],
      ['198.18.0.1', 'reserved (benchmarking)'],
      ['240.0.0.1', 'reserved 240/4'],
      ['::1', 'IPv6 loopback'],
      ['::', 'IPv6 unspecified'],
      ['fe80::1', 'IPv6 link-local'],
      ['fe80::1%eth0', 'IPv6 link-local with a zone'],
      ['febf:ffff::1', 'IPv6 link-local, top of fe80::/10'],
      ['fc00::1', 'unique-local'],
      ['fd12:3456::1', 'unique-local'],
      ['fd00:ec2::254', 'cloud metadata (IPv6)'],
      ['ff02::1', 'IPv6 multicast'],
      ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
      ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
      ['::FFFF:A9FE:A9FE', 'IPv4-mapped metadata, upper case'],
      ['::ffff:10.0.0.1', 'IPv4-mapped private'],
      ['::ffff:0.0.0.0', 'IPv4-mapped unspecified'],
      ['2002:7f00:1::', '6to4 of loopback'],
      ['2002:a9fe:a9fe::1', '6to4 of metadata'],
      ['2002:a00:1::', '6to4 of 10.0.0.1'],
      ['64:ff9b::7f00:1', 'NAT64 of loopback'],
      ['64:ff9b::127.0.0.1', 'NAT64 of loopback, dotted form'],
      ['64:ff9b::a9fe:a9fe', 'NAT64 of metadata'],
      ['64:ff9b:1::a00:1', 'local-use NAT64 (RFC 8215)'],
      ['2001::1', 'Teredo'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo with a public server'],
      ['::7f00:1', 'IPv4-compatible (deprecated)'],
      ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
      ['2001:db8::1', 'documentation'],
      ['fec0::1', 'deprecated site-local'],
      ['100::1', 'discard'],
    ])('denies %s (%s)', (address) => {
      expect(closed.allowsAddress(address)).toBe(false);
    });

    it.each([
      ['', 'empty'],
      ['localhost', 'a name'],
      ['127.1', 'a short IPv4 form (not address text)'],
      ['2130706433', 'a decimal IPv4 form'],
      ['0x7f000001', 'a hex IPv4 form'],
      ['0177.0.0.1', 'an octal IPv4 form'],
      ['[::1]', 'a bracketed IPv6'],
      ['8.8.8.8.', 'a trailing dot'],
      ['1.2.3.256', 'an octet out of range'],
      ['::ffff:1.2.3', 'a broken mapped form'],
    ])('denies unparseable %j (%s)', (address) => {
      expect(closed.allowsAddress(address)).toBe(false);
    });

    describe('allowPrivateCidrs', () => {
      it('opens exactly the range of an IPv4 /32, in its IPv4-mapped form too', () => {
        const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] });
        expect(policy.allowsAddress('127.0.0.1')).toBe(true);
        expect(policy.allowsAddress('::ffff:127.0.0.1')).toBe(true);
        expect(policy.allowsAddress('::ffff:7f00:1')).toBe(true);
        expect(policy.allowsAddress('127.0.0.2')).toBe(false);
        expect(policy.allowsAddress('::ffff:127.0.0.2')).toBe(false);
        expect(policy.allowsAddress('::1')).toBe(false);
        expect(policy.allowsAddress('10.0.0.1')).toBe(false);
      });

      it('leaves 6to4 and NAT64 forms of an opened IPv4 denied', () => {
        const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['127.0.0.1/32'] });
        expect(policy.allowsAddress('2002:7f00:1::')).toBe(false);
        expect(policy.allowsAddress('64:ff9b::7f00:1')).toBe(false);
      });

      it('opens a wider IPv4 range up to its boundary', () => {
        const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['10.1.0.0/16'] });
        expect(policy.allowsAddress('10.1.0.0')).toBe(true);
        expect(policy.allowsAddress('10.1.255.255')).toBe(true);
        expect(policy.allowsAddress('10.2.0.0')).toBe(false);
        expect(policy.allowsAddress('10.0.255.255')).toBe(false);
      });

      it('opens an IPv6 range', () => {
        const policy = new EgressPolicy({ allowHosts: ['*'], allowPrivateCidrs: ['fd00:ec2::/32', '::1/128'] });
        expect(policy.allowsAddress('fd00:ec2::254')).toBe(true);
        expect(policy.allowsAddress('::1')).toBe(true);
        expect(policy.allowsAddress('fd00:ec3::254')).toBe(false);
        expect(policy.allowsAddress('127.0.0.1')).toBe(false);
      });

      it.each(['nonsense', '10.0.0.0/33', '10.0.0.0', 'fd00::/129', '', '10.0.0.0/8 '])(
        'throws a RangeError naming the CIDR %j',
        (cidr) => {
          expect(() => new EgressPolicy({ allowHosts: [], allowPrivateCidrs: ['10.0.0.0/8', cidr] })).toThrow(
            RangeError,
          );
          expect(() => new EgressPolicy({ allowHosts: [], allowPrivateCidrs: [cidr] })).toThrow(`'${cidr}'`);
        },
      );
    });
  });

  describe('allowsHost', () => {
    const policy = new EgressPolicy({
      allowHosts: ['api.test', 'Upper.Example.', '203.0.113.7', '2606:4700:4700::1111'],
      allowPrivateCidrs: [],
    });

    it.each([
      ['api.test', 'exact'],
      ['API.Test', 'case-insensitive'],
      ['api.test.', 'trailing dot on the host'],
      ['upper.example', 'trailing dot and case in the rule'],
      ['UPPER.EXAMPLE.', 'both'],
      ['203.0.113.7', 'a listed IPv4 literal'],
      ['[2606:4700:4700::1111]', 'a listed IPv6 literal in brackets'],
      ['2606:4700:4700:0:0:0:0:1111', 'a listed IPv6 literal written out'],
    ])('allows %j (%s)', (host) => {
      expect(policy.allowsHost(host)).toBe(true);
    });

    it.each([
      ['other.test', 'another host'],
      ['sub.api.test', 'a subdomain'],
      ['test', 'a parent domain'],
      ['api.test..', 'two trailing dots'],
      ['api.testx', 'a longer name'],
      ['203.0.113.8', 'an unlisted IPv4 literal'],
      ['[::1]', 'an unlisted IPv6 literal'],
      ['', 'empty'],
      ['.', 'only a dot'],
    ])('denies %j (%s)', (host) => {
      expect(policy.allowsHost(host)).toBe(false);
    });

    it('allows any name and any literal with *', () => {
      for (const host of ['anything.example', 'localhost', '127.0.0.1', '[::1]', 'A.B.']) {
        expect(closed.allowsHost(host)).toBe(true);
      }
    });

    it('allows nothing with an empty list', () => {
      const none = new EgressPolicy({ allowHosts: [], allowPrivateCidrs: [] });
      expect(none.allowsHost('api.test')).toBe(false);
      expect(none.allowsHost('8.8.8.8')).toBe(false);
    });
  });

  describe('checkUrl', () => {
    const policy = new EgressPolicy({ allowHosts: ['api.test'], allowPrivateCidrs: [] });

    it.each(['http://api.test/v1', 'https://api.test:8443/v1?q=1', 'https://API.TEST./'])('passes %s', (url) => {
      expect(() => policy.checkUrl(new URL(url))).not.toThrow();
    });

    it.each([
      'ftp://api.test/file',
      'file:///etc/passwd',
      'data:text/plain,hello',
      'ws://api.test/socket',
      'gopher://api.test/',
      'javascript:alert(1)',
      'http://other.test/',
      'https://api.test.evil.example/',
      'http://127.0.0.1/',
    ])('denies %s with egress_denied', (url) => {
      let thrown: unknown;
      try {
        policy.checkUrl(new URL(url));
      } catch (error) {
        thrown = error;
      }
      expect(isResilienceError(thrown)).toBe(true);
      expect(thrown).toMatchObject({ kind: 'egress_denied', status: 403 });
    });

    it('passes a literal URL with * (addresses are checked at connect time)', () => {
      expect(() => closed.checkUrl(new URL('http://127.0.0.1/'))).not.toThrow();
    });
  });

  describe('egressDenied', () => {
    it('names the host and the key to configure, never the path, query, port or credentials', () => {
      const policy = new EgressPolicy({ allowHosts: [], allowPrivateCidrs: [] });
      let thrown: unknown;
      try {
        policy.checkUrl(new URL('http://user:pw@internal.example:8080/path?token=abc'));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ kind: 'egress_denied', status: 403, jsonrpcCode: -32013 });
      const message = (thrown as Error).message;
      expect(message).toBe("host 'internal.example' is not in containment.egress.allowHosts");
      expect(message).not.toMatch(/8080|token|abc|path|user|pw/);
    });

    it('points a denied address at allowPrivateCidrs without naming the address', () => {
      const message = egressDenied('address', 'db.internal').message;
      expect(message).toContain("host 'db.internal'");
      expect(message).toContain('containment.egress.allowPrivateCidrs');
      expect(message).not.toMatch(/\d+\.\d+\.\d+\.\d+/);
    });
  });
});

import { isOriginText, OriginPolicy } from './origin-policy';

const DEFAULTS = new OriginPolicy({ allowedOrigins: [], allowedHosts: [] });

describe('OriginPolicy', () => {
  it('lets a request without Origin through: agent runtimes and SDKs send none', () => {
    expect(DEFAULTS.refusal({ host: 'bulkhead.example.com' })).toBeUndefined();
    expect(DEFAULTS.refusal({})).toBeUndefined();
  });

  it.each([
    'http://localhost',
    'http://localhost:6274',
    'https://localhost:8443',
    'http://127.0.0.1:3000',
    'http://[::1]:3000',
  ])('lets a loopback page (%s) through by default', (origin) => {
    expect(DEFAULTS.refusal({ origin, host: 'bulkhead.example.com' })).toBeUndefined();
  });

  it.each([
    ['another site', 'http://evil.example.com', 'localhost:3000'],
    ['a rebinding page naming its own domain as Host', 'http://evil.example.com:3000', 'evil.example.com:3000'],
    ['a sandboxed frame', 'null', 'localhost:3000'],
    ['two origins joined', 'http://localhost:3000, http://evil.example.com', 'localhost:3000'],
    ['an origin with a path', 'http://localhost:3000/page', 'localhost:3000'],
    ['a file page', 'file://', 'localhost:3000'],
    ['a loopback look-alike', 'http://localhost.evil.example.com', 'localhost:3000'],
  ])('refuses %s', (_what, origin, host) => {
    expect(DEFAULTS.refusal({ origin, host })).toMatch(/Origin|origin/);
  });

  it('lets a listed origin through, written as the browser sends it or not', () => {
    const policy = new OriginPolicy({ allowedOrigins: ['HTTPS://App.Example.com:443'], allowedHosts: [] });

    expect(policy.refusal({ origin: 'https://app.example.com', host: 'bulkhead:3000' })).toBeUndefined();
    expect(policy.refusal({ origin: 'http://app.example.com', host: 'bulkhead:3000' })).toBeDefined();
  });

  it("lets any origin through with '*'", () => {
    const policy = new OriginPolicy({ allowedOrigins: ['*'], allowedHosts: [] });

    expect(policy.refusal({ origin: 'http://evil.example.com', host: 'evil.example.com' })).toBeUndefined();
  });

  it('lets the service’s own page through when its Host is one the service is reached by', () => {
    const policy = new OriginPolicy({ allowedOrigins: [], allowedHosts: ['bulkhead.example.com'] });

    expect(policy.refusal({ origin: 'https://bulkhead.example.com', host: 'bulkhead.example.com' })).toBeUndefined();
    expect(policy.refusal({ origin: 'http://bulkhead.example.com:8080', host: 'bulkhead.example.com:8080' })).toBe(
      undefined,
    );
    // Another port of the same name is another site.
    expect(policy.refusal({ origin: 'http://bulkhead.example.com:9999', host: 'bulkhead.example.com' })).toBeDefined();
  });

  it('refuses a Host the service is not reached by once hosts are listed, loopback ones still allowed', () => {
    const policy = new OriginPolicy({ allowedOrigins: [], allowedHosts: ['bulkhead.example.com'] });

    expect(policy.refusal({ host: 'evil.example.com' })).toMatch(/Host/);
    expect(policy.refusal({})).toMatch(/Host/);
    expect(policy.refusal({ host: 'BULKHEAD.example.com:3000' })).toBeUndefined();
    expect(policy.refusal({ host: '127.0.0.1:3000' })).toBeUndefined();
  });

  it.each([
    ['https://app.example.com', true],
    ['http://tools.internal:8080', true],
    ['*', true],
    ['https://app.example.com/', false],
    ['app.example.com', false],
    ['ftp://app.example.com', false],
    ['HTTPS://App.Example.com:443', true],
    ['https://user@app.example.com', false],
  ])('reads %j as an origin the options may list: %s', (value, valid) => {
    expect(isOriginText(value)).toBe(valid);
  });
});

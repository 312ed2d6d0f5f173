import { FakeClock } from '../common/fake-clock';
import { isResilienceError } from '../common';
import { McpSessionTable, type SessionLimits } from './mcp-session-table';

const LIMITS: SessionLimits = { maxSessions: 3, maxSessionsPerTenant: 2, idleMs: 60_000 };

describe('McpSessionTable', () => {
  let clock: FakeClock;
  let table: McpSessionTable<string>;

  beforeEach(() => {
    clock = new FakeClock();
    table = new McpSessionTable(LIMITS, clock);
  });

  /** Opens a session as the service does: room first, then the session. */
  function open(id: string, tenant: string): string[] {
    const closed = table.makeRoom(tenant);
    table.add(id, tenant, id);
    return closed;
  }

  const noExpiry = () => {
    throw new Error('nothing should expire');
  };

  it('finds a session for the tenant that opened it only', () => {
    open('s1', 'acme');

    expect(table.find('s1', 'acme', noExpiry)?.session).toBe('s1');
    expect(table.find('s1', 'evil', noExpiry)).toBeUndefined();
    expect(table.find('s2', 'acme', noExpiry)).toBeUndefined();
  });

  it('evicts the tenant’s own session idle longest when the tenant is at its bound', () => {
    open('a1', 'acme');
    clock.advance(10);
    open('b1', 'bob');
    clock.advance(10);
    open('a2', 'acme');
    clock.advance(10);
    table.touch(table.find('a1', 'acme', noExpiry)!);

    expect(open('a3', 'acme')).toEqual(['a2']);
    expect(table.countOf('acme')).toBe(2);
    expect(table.find('b1', 'bob', noExpiry)).toBeDefined();
  });

  it('evicts the service’s session idle longest when the service is at its bound', () => {
    open('a1', 'acme');
    clock.advance(10);
    open('b1', 'bob');
    clock.advance(10);
    open('c1', 'carol');

    expect(open('d1', 'dave')).toEqual(['a1']);
    expect(table.size).toBe(3);
  });

  it('never evicts a session with a request in flight, and refuses with queue_full when every candidate has one', () => {
    open('a1', 'acme');
    open('a2', 'acme');
    table.enter(table.find('a1', 'acme', noExpiry)!);

    expect(open('a3', 'acme')).toEqual(['a2']);
    table.enter(table.find('a3', 'acme', noExpiry)!);
    let refusal: unknown;
    try {
      table.makeRoom('acme');
    } catch (error) {
      refusal = error;
    }

    expect(isResilienceError(refusal) && refusal.kind).toBe('queue_full');
    expect((refusal as Error).message).toBe(
      "no room for another MCP session: tenant 'acme' has 2, each with a request in flight",
    );
    expect(table.makeRoom('bob')).toEqual([]);
  });

  it('expires a session idle for idleMs, but not one with a request in flight', () => {
    open('idle', 'acme');
    open('busy', 'bob');
    const busy = table.find('busy', 'bob', noExpiry)!;
    table.enter(busy);

    clock.advance(59_999);
    expect(table.expire()).toEqual([]);
    clock.advance(1);

    expect(table.expire()).toEqual(['idle']);
    expect(table.find('busy', 'bob', noExpiry)).toBe(busy);
    table.leave(busy);
    clock.advance(60_000);
    expect(table.expire()).toEqual(['busy']);
    expect(table.size).toBe(0);
  });

  it('hands back a session found expired before the sweep, and forgets it', () => {
    open('s1', 'acme');
    clock.advance(60_000);
    const expired: string[] = [];

    expect(table.find('s1', 'acme', (session) => expired.push(session))).toBeUndefined();
    expect(expired).toEqual(['s1']);
    expect(table.size).toBe(0);
    expect(table.countOf('acme')).toBe(0);
  });

  it('counts activity from the end of a request, not its start', () => {
    open('s1', 'acme');
    const entry = table.find('s1', 'acme', noExpiry)!;
    table.enter(entry);
    clock.advance(120_000);
    table.leave(entry);
    clock.advance(59_000);

    expect(table.expire()).toEqual([]);
  });

  it('does not bring back a session removed while a request was in it', () => {
    open('s1', 'acme');
    const entry = table.find('s1', 'acme', noExpiry)!;
    table.enter(entry);

    expect(table.remove('s1')).toBe(true);
    table.leave(entry);

    expect(table.size).toBe(0);
    expect(table.remove('s1')).toBe(false);
  });

  it('refuses impossible limits', () => {
    expect(() => new McpSessionTable({ ...LIMITS, maxSessions: 0 }, clock)).toThrow(RangeError);
    expect(() => new McpSessionTable({ ...LIMITS, maxSessionsPerTenant: 1.5 }, clock)).toThrow(RangeError);
    expect(() => new McpSessionTable({ ...LIMITS, idleMs: 0 }, clock)).toThrow(RangeError);
  });
});

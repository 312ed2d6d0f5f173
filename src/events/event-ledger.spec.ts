import { tenantsOf } from '../common';
import { FakeClock } from '../common/fake-clock';
import { EventLedger } from './event-ledger';

const START = Date.UTC(2026, 0, 1);

/** Records calls `c-from` ... `c-to`, one millisecond apart. */
function recordRange(ledger: EventLedger, clock: FakeClock, from: number, to: number): void {
  for (let n = from; n <= to; n++) {
    ledger.record(`c-${n}`, 'tool', 'lane', 'tenant', 'ok');
    clock.advance(1);
  }
}

const ids = (ledger: EventLedger, limit?: number) => ledger.recent(limit).map((event) => event.callId);

describe('EventLedger', () => {
  it('records each event with its fields and the wall time of the clock as an ISO string', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(4, clock);
    clock.advance(1234);
    ledger.record('call-1', 'search', 'search-lane', 'acme', 'queue_full');
    expect(ledger.recent()).toEqual([
      {
        at: '2026-01-01T00:00:01.234Z',
        callId: 'call-1',
        toolId: 'search',
        lane: 'search-lane',
        tenant: 'acme',
        status: 'queue_full',
      },
    ]);
  });

  it('is empty before anything is recorded', () => {
    const ledger = new EventLedger(3, new FakeClock());
    expect(ledger.recent()).toEqual([]);
    expect(ledger.recent(10)).toEqual([]);
  });

  it('returns events oldest first, newest last', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(5, clock);
    recordRange(ledger, clock, 1, 3);
    expect(ids(ledger)).toEqual(['c-1', 'c-2', 'c-3']);
    expect(ledger.recent().map((event) => event.at)).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.001Z',
      '2026-01-01T00:00:00.002Z',
    ]);
  });

  it('keeps only the newest `capacity` events once the ring wraps', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(3, clock);
    recordRange(ledger, clock, 1, 3);
    expect(ids(ledger)).toEqual(['c-1', 'c-2', 'c-3']);
    recordRange(ledger, clock, 4, 4);
    expect(ids(ledger)).toEqual(['c-2', 'c-3', 'c-4']);
    recordRange(ledger, clock, 5, 11);
    expect(ids(ledger)).toEqual(['c-9', 'c-10', 'c-11']);
  });

  it('returns the newest `limit` events in order, before and after the ring wraps', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(4, clock);
    recordRange(ledger, clock, 1, 3);
    expect(ids(ledger, 2)).toEqual(['c-2', 'c-3']);
    recordRange(ledger, clock, 4, 6);
    expect(ids(ledger, 1)).toEqual(['c-6']);
    expect(ids(ledger, 3)).toEqual(['c-4', 'c-5', 'c-6']);
    expect(ids(ledger, 4)).toEqual(['c-3', 'c-4', 'c-5', 'c-6']);
  });

  it('returns at most what it holds when the limit is larger', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(4, clock);
    recordRange(ledger, clock, 1, 2);
    expect(ids(ledger, 100)).toEqual(['c-1', 'c-2']);
  });

  it('returns nothing for a limit of 0 or less and rounds a fractional limit down', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(4, clock);
    recordRange(ledger, clock, 1, 3);
    expect(ledger.recent(0)).toEqual([]);
    expect(ledger.recent(-2)).toEqual([]);
    expect(ids(ledger, 1.9)).toEqual(['c-3']);
  });

  it('works with a capacity of one', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(1, clock);
    recordRange(ledger, clock, 1, 3);
    expect(ids(ledger)).toEqual(['c-3']);
  });

  it('hands out copies, so a caller cannot change what it holds', () => {
    const ledger = new EventLedger(2, new FakeClock(START));
    ledger.record('c-1', 'tool', 'lane', 'tenant', 'ok');
    ledger.recent()[0].status = 'tampered';
    expect(ledger.recent()[0].status).toBe('ok');
  });

  it('shows what chaos injected into a call only on that call’s line, and forgets it when the entry is reused', () => {
    const clock = new FakeClock(START);
    const ledger = new EventLedger(2, clock);
    ledger.record('c-1', 'search', 'main', 'acme', 'transient', ['latency', 'transient']);
    ledger.record('c-2', 'search', 'main', 'acme', 'ok');

    expect(ledger.recent().map((event) => event.chaos)).toEqual([['latency', 'transient'], undefined]);
    expect(Object.hasOwn(ledger.recent()[1], 'chaos')).toBe(false);

    ledger.record('c-3', 'search', 'main', 'acme', 'ok');
    expect(ledger.recent().map((event) => [event.callId, event.chaos])).toEqual([
      ['c-2', undefined],
      ['c-3', undefined],
    ]);
  });

  it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])('refuses a capacity of %p', (capacity) => {
    expect(() => new EventLedger(capacity, new FakeClock())).toThrow(
      new RangeError('capacity must be an integer of at least 1'),
    );
  });

  describe('what a viewer sees', () => {
    const acme = { tenant: 'acme', contained: false };
    const beta = { tenant: 'beta', contained: false };

    it('shows a tenant its own events and the events of no tenant its audience admits; the operators all', () => {
      const ledger = new EventLedger(10, new FakeClock(START));
      ledger.record('a-1', 'search', 'main', 'acme', 'ok');
      ledger.record('b-1', 'search', 'main', 'beta', 'ok');
      ledger.record('', 'search', '', '', 'breaker_open');
      ledger.record('', 'llm.solo.0', '', '', 'breaker_open', undefined, tenantsOf(['acme']));
      const seen = (events: ReturnType<EventLedger['recent']>) => events.map((event) => event.callId || event.toolId);

      expect(seen(ledger.recent(10, acme))).toEqual(['a-1', 'search', 'llm.solo.0']);
      expect(seen(ledger.recent(10, beta))).toEqual(['b-1', 'search']);
      expect(seen(ledger.recent(10))).toEqual(['a-1', 'b-1', 'search', 'llm.solo.0']);
    });

    it('forgets the audience of an entry it reuses', () => {
      const ledger = new EventLedger(1, new FakeClock(START));
      ledger.record('', 'llm.solo.0', '', '', 'breaker_open', undefined, tenantsOf(['acme']));
      ledger.record('', 'search', '', '', 'breaker_open');

      expect(ledger.recent(1, beta).map((event) => event.toolId)).toEqual(['search']);
    });
  });
});

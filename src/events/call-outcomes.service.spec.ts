import { FakeClock } from '../common/fake-clock';
import { CallOutcomes, type CallOutcome, type FinishedCall } from './call-outcomes.service';
import { EventLedger } from './event-ledger';

describe('CallOutcomes: chaos marks', () => {
  let clock: FakeClock;
  let ledger: EventLedger;
  let outcomes: CallOutcomes;
  let heard: CallOutcome[];

  beforeEach(() => {
    clock = new FakeClock();
    ledger = new EventLedger(100, clock);
    outcomes = new CallOutcomes(ledger, clock);
    heard = [];
    outcomes.onOutcome((outcome) => heard.push(outcome));
  });

  function finished(callId: string): FinishedCall {
    return {
      callId,
      toolId: 'search',
      lane: 'main',
      tenant: 'acme',
      abort: { aborted: false, reason: undefined },
      startedAt: 0,
      started: true,
      attempts: 3,
    };
  }

  it('puts the kinds injected into a call’s attempts, in order, on its ledger line and its outcome', () => {
    outcomes.markChaos('c-1', 'latency');
    outcomes.markChaos('c-1', 'transient');
    outcomes.markChaos('c-1', 'transient');

    outcomes.finish(finished('c-1'));

    expect(ledger.recent()[0]).toMatchObject({ callId: 'c-1', chaos: ['latency', 'transient', 'transient'] });
    expect(heard[0].chaos).toEqual(['latency', 'transient', 'transient']);
  });

  it('marks no other call, and forgets the marks once the call has finished', () => {
    outcomes.markChaos('c-1', 'timeout');
    outcomes.finish(finished('c-2'));
    outcomes.finish(finished('c-1'));
    outcomes.finish(finished('c-1'));

    expect(ledger.recent().map((event) => [event.callId, event.chaos])).toEqual([
      ['c-2', undefined],
      ['c-1', ['timeout']],
      ['c-1', undefined],
    ]);
  });

  it('keeps the marks of at most 10 000 running calls, dropping the oldest first', () => {
    for (let n = 0; n <= 10_000; n++) outcomes.markChaos(`c-${n}`, 'transient');

    outcomes.finish(finished('c-0'));
    outcomes.finish(finished('c-1'));
    outcomes.finish(finished('c-10000'));

    expect(ledger.recent().map((event) => event.chaos)).toEqual([undefined, ['transient'], ['transient']]);
  });
});

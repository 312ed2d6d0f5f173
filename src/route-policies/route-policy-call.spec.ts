import type { CallHandler } from '@nestjs/common';
import { lastValueFrom, Observable, of, throwError } from 'rxjs';
import { Lane } from '../bulkhead';
import { LazyAbortController, ResilienceError } from '../common';
import { FakeClock } from '../common/fake-clock';
import type { CallState } from '../common/nest';
import type { CallOutcomes, FinishedCall } from '../events';
import { type RoutePlan, RoutePolicyCall } from './route-policy-call';

function setUp(handle: () => Observable<unknown>, lane?: Lane) {
  const finished: FinishedCall[] = [];
  const outcomes = { finish: (call: FinishedCall) => finished.push(call) } as unknown as CallOutcomes;
  const plan: RoutePlan = {
    lane,
    laneName: lane?.name ?? '',
    queueTtlMs: undefined,
    priority: 'standard',
    breaker: undefined,
    label: 'Reports.list',
  };
  const state: CallState = { abort: new LazyAbortController(), callId: 'c1', tenant: 'acme', pool: 'normal' };
  const call = new RoutePolicyCall(plan, state, { handle } as CallHandler, outcomes, 0, 'standard');
  return { call, finished, state };
}

describe('RoutePolicyCall', () => {
  it("answers with the handler's last value and records one attempt", async () => {
    const { call, finished } = setUp(() => of(1, 2));
    call.startWithoutLane();
    await expect(lastValueFrom(call.answer)).resolves.toBe(2);
    expect(finished).toEqual([
      expect.objectContaining({ callId: 'c1', toolId: 'Reports.list', lane: '', tenant: 'acme', attempts: 1 }),
    ]);
    expect(finished[0]!.error).toBeUndefined();
  });

  it('answers undefined when the handler completes without a value', async () => {
    const { call } = setUp(() => new Observable((subscriber) => subscriber.complete()));
    call.startWithoutLane();
    await expect(lastValueFrom(call.answer, { defaultValue: 'none' })).resolves.toBeUndefined();
  });

  it("fails with the handler's error as a ResilienceError carrying the attempt", async () => {
    const { call, finished } = setUp(() => throwError(() => new ResilienceError('transient', 'down')));
    call.startWithoutLane();
    await expect(lastValueFrom(call.answer)).rejects.toMatchObject({ kind: 'transient', attempts: 1 });
    expect(finished[0]!.error).toMatchObject({ kind: 'transient' });
  });

  it('answers a subscriber that arrives after the call was refused, and one that arrived before', async () => {
    const lane = new Lane({ name: 'routes', concurrency: 1, queueCapacity: 1, clock: new FakeClock() });
    const { call, finished, state } = setUp(() => of('never'), lane);
    lane.admit({ start: () => new Promise(() => undefined), refuse: () => undefined });
    const early = lastValueFrom(call.answer);
    expect(lane.admit(call, call)).toBeUndefined();
    const stopped = new ResilienceError('stopped', 'the client left');
    state.abort.abort(stopped);
    await expect(early).rejects.toMatchObject({ kind: 'stopped', attempts: 0 });
    await expect(lastValueFrom(call.answer)).rejects.toMatchObject({ kind: 'stopped', attempts: 0 });
    expect(finished).toEqual([expect.objectContaining({ lane: 'routes', started: false, attempts: 0 })]);
  });

  it('answers every subscriber that subscribed before the answer', async () => {
    const lane = new Lane({ name: 'routes', concurrency: 1, queueCapacity: 0, clock: new FakeClock() });
    let release!: (value: string) => void;
    const { call } = setUp(
      () => new Observable((subscriber) => void (release = (v) => (subscriber.next(v), subscriber.complete()))),
      lane,
    );
    const answers = [lastValueFrom(call.answer), lastValueFrom(call.answer), lastValueFrom(call.answer)];
    expect(lane.admit(call, call)).toBeUndefined();
    release('done');
    await expect(Promise.all(answers)).resolves.toEqual(['done', 'done', 'done']);
  });
});

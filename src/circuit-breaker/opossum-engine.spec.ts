import CircuitBreaker from 'opossum';
import {
  type Attempt,
  errorFilter,
  freeProbeSlot,
  onCountedFailure,
  type OpossumCircuit,
  setOpenTime,
  takeOver,
} from './opossum-engine';

// Each test checks one assumption opossum-engine.ts makes about opossum's lib/circuit.js, on
// a bare opossum circuit, and is named after it: when an opossum release breaks one, the failing
// title says which. Opossum's reset timer runs on jest's fake timers.

const RESET_MS = 1_000;
const made: OpossumCircuit[] = [];

function circuit(options: CircuitBreaker.Options = {}): OpossumCircuit {
  const created = new CircuitBreaker((attempt: Attempt) => attempt(), {
    timeout: false,
    resetTimeout: RESET_MS,
    volumeThreshold: 1,
    enableSnapshots: false,
    rollingPercentilesEnabled: false,
    ...options,
  });
  made.push(created);
  return created;
}

/** A circuit taken over as the Breaker takes it over, opened and half-opened by its own timer. */
function halfOpened(): OpossumCircuit {
  const subject = circuit();
  takeOver(subject);
  subject.open();
  jest.advanceTimersByTime(RESET_MS);
  expect(subject.halfOpen).toBe(true);
  return subject;
}

const never: Attempt = () => new Promise<never>(() => undefined);

beforeEach(() => {
  jest.useFakeTimers();
});

afterEach(() => {
  for (const item of made.splice(0)) item.shutdown();
  jest.useRealTimers();
});

describe('opossum internals the breaker relies on', () => {
  it('assumption 1: fire() runs the action before it returns (synchronously)', () => {
    const subject = circuit();
    const action = jest.fn(never);

    void subject.fire(action);

    expect(action).toHaveBeenCalledTimes(1);
  });

  it('assumption 2: the circuit keeps its semaphore in a plain `semaphore` property and asks it before each call', () => {
    const subject = circuit({ capacity: 1 });
    expect(subject).toHaveProperty('semaphore');
    takeOver(subject);
    const action = jest.fn(never);

    for (let i = 0; i < 3; i++) void subject.fire(action);

    expect(action).toHaveBeenCalledTimes(3);
  });

  it('assumption 3: the constructor adds exactly one `success` listener, the one that closes a half-open circuit', async () => {
    const untouched = circuit();
    untouched.open();
    jest.advanceTimersByTime(RESET_MS);
    await untouched.fire(async () => 'ok');
    expect(untouched.closed).toBe(true);

    const subject = halfOpened();
    await subject.fire(async () => 'ok');

    expect(subject.halfOpen).toBe(true);
    expect(() => takeOver(subject)).toThrow(/assumption 3/);
  });

  it('assumption 4: half open, `Symbol(pending-close)` true admits the probe, fire() sets it false, and true again admits the next', async () => {
    const subject = halfOpened();
    expect(subject.pendingClose).toBe(true);
    void subject.fire(never);
    expect(subject.pendingClose).toBe(false);
    await expect(subject.fire(never)).rejects.toMatchObject({ code: 'EOPENBREAKER' });

    freeProbeSlot(subject);

    expect(subject.pendingClose).toBe(true);
    const next = jest.fn(never);
    void subject.fire(next);
    expect(next).toHaveBeenCalledTimes(1);
    expect(subject.pendingClose).toBe(false);
  });

  it('assumption 5: the error filter gets the error and the fired argument, and a filtered error is a `success` emitted at once, after the status counted it', async () => {
    const seen: string[] = [];
    const filter = jest.fn((_error: unknown, _attempt: Attempt) => {
      seen.push('filter');
      void Promise.resolve().then(() => seen.push('a microtask later'));
      return true;
    });
    const subject = circuit({ errorFilter: errorFilter(filter) });
    subject.on('success', (result: unknown) =>
      seen.push(`success ${String(result)} counted ${subject.stats.successes}`),
    );
    const error = new Error('not counted');
    const attempt: Attempt = () => Promise.reject(error);

    await expect(subject.fire(attempt)).rejects.toBe(error);

    expect(filter).toHaveBeenCalledWith(error, attempt);
    expect(seen).toEqual(['filter', 'success Error: not counted counted 1', 'a microtask later']);
  });

  it('assumption 6: a counted failure is a `failure` event with the fired argument, after the status counted it and before the circuit decides to open', async () => {
    const subject = circuit({ volumeThreshold: 1 });
    const seen: Array<{ attempt: Attempt; failures: number; opened: boolean }> = [];
    onCountedFailure(subject, (attempt) =>
      seen.push({ attempt, failures: subject.stats.failures, opened: subject.opened }),
    );
    const attempt: Attempt = () => Promise.reject(new Error('counted'));

    await subject.fire(attempt).catch(() => undefined);

    expect(seen).toEqual([{ attempt, failures: 1, opened: false }]);
    expect(subject.opened).toBe(true);
  });

  it('assumption 7: each opening waits the resetTimeout set before it, an opening by a failure included', async () => {
    const subject = circuit({ volumeThreshold: 1 });
    setOpenTime(subject, 3 * RESET_MS);
    subject.open();
    jest.advanceTimersByTime(3 * RESET_MS - 1);
    expect(subject.opened).toBe(true);
    jest.advanceTimersByTime(1);
    expect(subject.halfOpen).toBe(true);

    onCountedFailure(subject, () => setOpenTime(subject, 5 * RESET_MS));
    await subject.fire(() => Promise.reject(new Error('probe failed'))).catch(() => undefined);
    expect(subject.opened).toBe(true);
    jest.advanceTimersByTime(5 * RESET_MS - 1);
    expect(subject.opened).toBe(true);
    jest.advanceTimersByTime(1);
    expect(subject.halfOpen).toBe(true);
  });
});

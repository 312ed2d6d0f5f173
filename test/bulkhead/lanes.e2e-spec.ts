import { FakeClock } from '../../src/common/fake-clock';
import { closeOnFakeClock } from '../support/close-app';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';
import { invoke, send } from '../support/http-client';
import { getLanes } from '../support/service-reads';

/** A lane's waiting calls by priority class when none waits. */
const NONE_WAITING = { critical: 0, standard: 0, sheddable: 0 };

const CONFIG = {
  lanes: {
    alpha: { concurrency: 2, queueCapacity: 3 },
    beta: { concurrency: 1, queueCapacity: 0 },
    gamma: { concurrency: 4096, queueCapacity: 100_000, queueTtlMs: 100 },
  },
  tools: {
    slow: { lane: 'alpha', kind: 'builtin', builtin: 'delay' },
    quick: { lane: 'beta', kind: 'builtin', builtin: 'echo' },
  },
};

describe('GET /v1/lanes', () => {
  let clock: FakeClock;
  let service: TestApp | undefined;

  beforeEach(async () => {
    clock = new FakeClock();
    service = await createTestApp(CONFIG, { clock });
  });

  afterEach(async () => {
    await closeOnFakeClock(service, clock);
    service = undefined;
  });

  it('lists every configured lane with exactly active, waiting (by class too), concurrency, queueCapacity and peakActive', async () => {
    const response = await send('GET', `${service!.url}/v1/lanes`);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      lanes: {
        alpha: { active: 0, waiting: 0, waitingByClass: NONE_WAITING, concurrency: 2, queueCapacity: 3, peakActive: 0 },
        beta: { active: 0, waiting: 0, waitingByClass: NONE_WAITING, concurrency: 1, queueCapacity: 0, peakActive: 0 },
        gamma: {
          active: 0,
          waiting: 0,
          waitingByClass: NONE_WAITING,
          concurrency: 4096,
          queueCapacity: 100_000,
          peakActive: 0,
        },
      },
    });
  });

  it('shows running and waiting calls while they last and keeps peakActive after they finish', async () => {
    const url = service!.url;
    const calls = [1, 2, 3].map((n) => invoke(url, 'slow', { ms: 1000 }, { 'x-call-id': `slow-${n}` }));
    await eventually(async () => expect((await getLanes(url)).alpha).toMatchObject({ active: 2, waiting: 1 }));
    await invoke(url, 'quick', { q: 1 });
    const lanes = await getLanes(url);
    expect(lanes).toEqual({
      alpha: {
        active: 2,
        waiting: 1,
        waitingByClass: { ...NONE_WAITING, standard: 1 },
        concurrency: 2,
        queueCapacity: 3,
        peakActive: 2,
      },
      beta: { active: 0, waiting: 0, waitingByClass: NONE_WAITING, concurrency: 1, queueCapacity: 0, peakActive: 1 },
      gamma: {
        active: 0,
        waiting: 0,
        waitingByClass: NONE_WAITING,
        concurrency: 4096,
        queueCapacity: 100_000,
        peakActive: 0,
      },
    });

    // Each running call holds a delay timer and an attempt timeout; the waiting one its queue TTL.
    await eventually(() => expect(clock.pendingTimers).toBe(5));
    clock.advance(1000);
    await eventually(async () => expect((await getLanes(url)).alpha).toMatchObject({ active: 1, waiting: 0 }));
    await eventually(() => expect(clock.pendingTimers).toBe(2));
    clock.advance(1000);
    const answers = await Promise.all(calls);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect((await getLanes(url)).alpha).toEqual({
      active: 0,
      waiting: 0,
      waitingByClass: NONE_WAITING,
      concurrency: 2,
      queueCapacity: 3,
      peakActive: 2,
    });
  });
});

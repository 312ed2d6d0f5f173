import { FakeClock } from '../../../common/fake-clock';
import { MemoryStoredResponsesStore } from './memory-stored-responses.store';
import { describeStoredResponsesStore, keptResponse } from './stored-responses-store.contract';

const ROOMY = { maxBytes: 1024 * 1024, maxResponseBytes: 16 * 1024 };
const TTL_MS = 60_000;

describeStoredResponsesStore('MemoryStoredResponsesStore', (clock) => new MemoryStoredResponsesStore(clock, ROOMY), {
  passTime: (clock, ms) => clock.advance(ms),
});

/** The bytes a response and its two items hold: their JSON in UTF-8. */
const bytesOf = (id: string) => {
  const response = keptResponse(id);
  return [response, ...response.output].reduce((sum, part) => sum + Buffer.byteLength(JSON.stringify(part)), 0);
};

describe('MemoryStoredResponsesStore', () => {
  let clock: FakeClock;

  beforeEach(() => {
    clock = new FakeClock();
  });

  const storeOf = (bounds: Partial<typeof ROOMY> = {}) =>
    new MemoryStoredResponsesStore(clock, { ...ROOMY, ...bounds });

  it('answers at once, without a promise', () => {
    const store = storeOf();

    expect(store.keep('acme', keptResponse('resp_1'), TTL_MS)).toBe(true);
    expect(store.response('acme', 'resp_1')).toEqual(keptResponse('resp_1'));
  });

  it('answers until the last millisecond of the TTL', () => {
    const store = storeOf();
    store.keep('acme', keptResponse('resp_1'), TTL_MS);

    clock.advance(TTL_MS - 1);
    expect(store.items('acme', ['msg_resp_1_0'])).toEqual([keptResponse('resp_1').output[0]]);

    clock.advance(1);
    expect(store.items('acme', ['msg_resp_1_0'])).toEqual([null]);
  });

  it('counts the UTF-8 bytes of a response and of its items, and evicts the least recently used beyond maxBytes', () => {
    const size = bytesOf('resp_1');
    const store = storeOf({ maxBytes: 2 * size });
    store.keep('acme', keptResponse('resp_1'), TTL_MS);
    store.keep('acme', keptResponse('resp_2'), TTL_MS);
    expect(store.bytes).toBe(2 * size);
    store.response('acme', 'resp_1');
    store.items('acme', ['msg_resp_1_0', 'fc_call_resp_1']);

    store.keep('acme', keptResponse('resp_3'), TTL_MS);

    expect(store.bytes).toBeLessThanOrEqual(2 * size);
    expect(store.response('acme', 'resp_2')).toBeNull();
    expect(store.response('acme', 'resp_1')).not.toBeNull();
    expect(store.response('acme', 'resp_3')).not.toBeNull();
  });

  it('keeps nothing with a bound of 0', () => {
    const store = storeOf({ maxBytes: 0 });

    store.keep('acme', keptResponse('resp_1'), TTL_MS);

    expect(store.response('acme', 'resp_1')).toBeNull();
    expect(store.size).toBe(0);
  });

  it('drops expired entries nobody asks for, a few per decision', () => {
    const store = storeOf();
    for (let index = 0; index < 30; index++) store.keep('acme', keptResponse(`resp_${index}`), 1_000);
    clock.advance(1_000);

    for (let index = 0; index < 60; index++) store.response('acme', 'resp_absent');

    expect(store.size).toBe(0);
    expect(store.bytes).toBe(0);
  });

  it.each([
    ['maxBytes', { maxBytes: -1 }],
    ['maxResponseBytes', { maxResponseBytes: Number.NaN }],
  ])('rejects an impossible %s with a RangeError', (_label, bounds) => {
    expect(() => storeOf(bounds)).toThrow(RangeError);
  });
});

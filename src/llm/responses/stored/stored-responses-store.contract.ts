import { promised, type Promised } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import type { ResponsesItem } from '../../wire';
import type { StoredResponse, StoredResponsesStore } from './stored-responses.store';

/** Builds the store under test on the given clock (the memory store's only source of time). */
export type MakeStoredResponsesStore = (clock: FakeClock) => StoredResponsesStore | Promise<StoredResponsesStore>;

/** How a suite lets time pass for its store: virtual time on the clock, or real time for Redis's own TTLs. */
export interface StoredResponsesContractOptions {
  passTime(clock: FakeClock, ms: number): void | Promise<void>;
}

/** Short enough to wait for in real time, long enough for a local Redis to answer before it is over. */
export const SHORT_KEEP_MS = 250;
const LONG_KEEP_MS = 60_000;

/** A kept response of one user question, with a text answer and a function call. */
export function keptResponse(id: string, text = 'Looking it up.'): StoredResponse {
  return {
    id,
    input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris? «été» 🌞' }] }],
    output: [
      {
        type: 'message',
        id: `msg_${id}_0`,
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text, annotations: [] }],
      },
      {
        type: 'function_call',
        id: `fc_call_${id}`,
        call_id: `call_${id}`,
        name: 'weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ] as ResponsesItem[],
  };
}

/**
 * The contract every {@link StoredResponsesStore} keeps, asserted only through the interface, so
 * the same suite runs against the memory store (virtual time) and Redis (its own TTLs, in real
 * time: SHORT_KEEP_MS at a time). `cleanup` runs after each test.
 */
export function describeStoredResponsesStore(
  name: string,
  makeStore: MakeStoredResponsesStore,
  options: StoredResponsesContractOptions,
  cleanup?: () => Promise<void>,
): void {
  describe(`StoredResponsesStore contract: ${name}`, () => {
    let clock: FakeClock;
    let raw: StoredResponsesStore;
    let store: Promised<StoredResponsesStore>;

    beforeEach(async () => {
      clock = new FakeClock();
      raw = await makeStore(clock);
      store = promised(raw);
    });

    if (cleanup) afterEach(cleanup);

    const passTime = (ms: number) => Promise.resolve(options.passTime(clock, ms));

    it('answers none for a response or an item never kept', async () => {
      await expect(store.response('acme', 'resp_absent')).resolves.toBeNull();
      await expect(store.items('acme', ['msg_absent', 'fc_absent'])).resolves.toEqual([null, null]);
    });

    it('gives back a kept response whole, and each output item by its id, in the order asked', async () => {
      const response = keptResponse('resp_1');

      await store.keep('acme', response, LONG_KEEP_MS);

      await expect(store.response('acme', 'resp_1')).resolves.toEqual(response);
      await expect(store.items('acme', ['fc_call_resp_1', 'msg_absent', 'msg_resp_1_0'])).resolves.toEqual([
        response.output[1],
        null,
        response.output[0],
      ]);
    });

    it('keeps them until the TTL has passed, and no longer', async () => {
      await store.keep('acme', keptResponse('resp_1'), SHORT_KEEP_MS);
      await expect(store.response('acme', 'resp_1')).resolves.not.toBeNull();

      await passTime(SHORT_KEEP_MS);

      await expect(store.response('acme', 'resp_1')).resolves.toBeNull();
      await expect(store.items('acme', ['msg_resp_1_0'])).resolves.toEqual([null]);
    });

    it("never answers one tenant with another tenant's response or item", async () => {
      await store.keep('team-a', keptResponse('resp_1', 'for team A'), LONG_KEEP_MS);

      await expect(store.response('team-b', 'resp_1')).resolves.toBeNull();
      await expect(store.items('team-b', ['msg_resp_1_0'])).resolves.toEqual([null]);

      await store.keep('team-b', keptResponse('resp_1', 'for team B'), LONG_KEEP_MS);
      await expect(store.response('team-a', 'resp_1')).resolves.toEqual(keptResponse('resp_1', 'for team A'));
      await expect(store.response('team-b', 'resp_1')).resolves.toEqual(keptResponse('resp_1', 'for team B'));
    });

    it('answers the latest response kept under an id', async () => {
      await store.keep('acme', keptResponse('resp_1', 'first'), LONG_KEEP_MS);
      await store.keep('acme', keptResponse('resp_1', 'second'), LONG_KEEP_MS);

      await expect(store.response('acme', 'resp_1')).resolves.toEqual(keptResponse('resp_1', 'second'));
    });

    it('keeps nothing of a response larger than its bound, and says so', async () => {
      await expect(store.keep('acme', keptResponse('resp_small'), LONG_KEEP_MS)).resolves.toBe(true);
      await expect(store.keep('acme', keptResponse('resp_big', 'x'.repeat(64 * 1024)), LONG_KEEP_MS)).resolves.toBe(
        false,
      );

      await expect(store.response('acme', 'resp_big')).resolves.toBeNull();
      await expect(store.items('acme', ['msg_resp_big_0'])).resolves.toEqual([null]);
    });

    it('hands every read a copy of its own, and takes its copy when it keeps', async () => {
      const response = keptResponse('resp_1');
      const keeping = store.keep('acme', response, LONG_KEEP_MS);
      response.input.length = 0;
      await keeping;

      const first = (await store.response('acme', 'resp_1'))!;
      first.output.length = 0;

      await expect(store.response('acme', 'resp_1')).resolves.toEqual(keptResponse('resp_1'));
    });

    it.each([0, -1, 1.5, Number.NaN])('throws a RangeError at once for a TTL of %p, keeping nothing', async (ttlMs) => {
      expect(() => raw.keep('acme', keptResponse('resp_1'), ttlMs)).toThrow(RangeError);

      await expect(store.response('acme', 'resp_1')).resolves.toBeNull();
    });
  });
}

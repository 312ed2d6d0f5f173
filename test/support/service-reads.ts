import type { LaneSnapshot } from '../../src/bulkhead';
import type { LedgerEvent } from '../../src/events';
import { send } from './http-client';

/** One lane of `GET /v1/lanes`. */
export type LaneView = LaneSnapshot;

/** One line of `GET /v1/events`. */
export type EventView = LedgerEvent;

/** The lanes snapshot of a running test app. */
export async function getLanes(base: string): Promise<Record<string, LaneView>> {
  const response = await send('GET', `${base}/v1/lanes`);
  if (response.status !== 200) throw new Error(`GET /v1/lanes answered ${response.status}`);
  return response.body.lanes;
}

/** The event ledger of a running test app, newest last. */
/** The events the caller may see: its own tenant's (`headers` carries its key; anonymous without). */
export async function getEvents(base: string, limit?: number, headers?: Record<string, string>): Promise<EventView[]> {
  const query = limit === undefined ? '' : `?limit=${limit}`;
  const response = await send('GET', `${base}/v1/events${query}`, { headers });
  if (response.status !== 200) throw new Error(`GET /v1/events answered ${response.status}`);
  return response.body.events;
}

/** The ledger line of one call, or undefined while it has none. */
export async function eventOf(base: string, callId: string): Promise<EventView | undefined> {
  return (await getEvents(base, 1000)).find((event) => event.callId === callId);
}

/** Runs `count` tasks with at most `concurrency` at once; resolves with their results in order. */
export async function inParallel<T>(count: number, concurrency: number, task: (index: number) => Promise<T>) {
  const results: T[] = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) results[index] = await task(index);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}

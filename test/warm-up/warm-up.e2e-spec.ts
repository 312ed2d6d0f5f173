import { silentAppOf } from '../../src/silent-app';
import { warmUpRequestPath } from '../../src/warm-up';
import { eventually } from '../support/eventually';

/** What keeps the process alive, by kind: what a warm-up must not leave behind. */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Until nothing more of any kind is running than `before` (a closed server's handle goes a turn or two after its close). */
function nothingLeftSince(before: Map<string, number>): Promise<void> {
  return eventually(() => {
    const more = [...resources()].filter(([kind, count]) => count > (before.get(kind) ?? 0));
    expect(more).toEqual([]);
  });
}

/**
 * The start-up warm-up (src/warm-up) with the service's own app builder: every kind of call it
 * sends is served, and the throwaway app, its model server and its connections are gone after.
 */
describe('warming the request path up', () => {
  it('serves every call it sends, within its budget, and leaves nothing running', async () => {
    const before = resources();
    const now = () => performance.now();

    // A small budget: each of the four senders still runs a round of every kind of call.
    const report = await warmUpRequestPath({ budgetMs: 300, build: silentAppOf, now });

    expect(report.failed).toBe(0);
    // Six kinds of call (chat whole and streamed, cached, Responses, Messages, a tool), four senders.
    expect(report.calls).toBeGreaterThanOrEqual(24);
    await nothingLeftSince(before);
  });

  it('does nothing with no budget', async () => {
    const build = jest.fn(silentAppOf);

    const report = await warmUpRequestPath({ budgetMs: 0, build, now: () => 0 });

    expect(report).toEqual({ calls: 0, failed: 0, elapsedMs: 0 });
    expect(build).not.toHaveBeenCalled();
  });

  it('lets a failure out to its caller, the app and the model server closed all the same', async () => {
    const before = resources();
    const failing = async () => {
      throw new Error('no app today');
    };

    await expect(warmUpRequestPath({ budgetMs: 1_000, build: failing, now: () => 0 })).rejects.toThrow('no app today');
    await nothingLeftSince(before);
  });
});

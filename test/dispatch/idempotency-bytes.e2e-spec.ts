import { FakeClock } from '../../src/common/fake-clock';
import { IdempotencyStore, MemoryIdempotencyStore } from '../../src/idempotency';
import { connectMcp, closeAll, type McpConnection } from '../mcp/mcp-client';
import { createTestApp, type TestApp } from '../support/create-app';
import { invoke, send } from '../support/http-client';
import { testTenant } from '../support/tenants';

const KiB = 1024;
const MAX_BYTES = 1024 * KiB;
const MAX_BYTES_PER_TENANT = 512 * KiB;
const MAX_ENTRY_BYTES = 128 * KiB;
/** Each call's arguments, echoed back: a 100 KiB outcome, within maxEntryBytes. */
const payload = (label: string) => ({ label, blob: 'x'.repeat(100 * KiB) });
const ACME = testTenant('acme');

/**
 * The attack of issue 36: calls with a new `Idempotency-Key` each and a large answer (the shipped
 * config lets anonymous callers use `echo`), through every transport that takes a key. The memory
 * store once kept every outcome whole for the retention window, bounded only by a count of keys:
 * 1 MB echoes took a 1 GiB heap down at call 45. Here the store's own byte count is the measure.
 */
describe('idempotency outcomes are bounded by bytes', () => {
  let current: TestApp;
  let store: MemoryIdempotencyStore;
  const connections: McpConnection[] = [];

  beforeEach(async () => {
    current = await createTestApp(
      {
        auth: { allowAnonymous: true, apiKeys: [ACME.apiKey] },
        server: { bodyLimitBytes: 1024 * KiB },
        lanes: { general: { concurrency: 16, queueCapacity: 64 } },
        tools: { echo: { lane: 'general', kind: 'builtin', builtin: 'echo' } },
        idempotency: {
          retentionMs: 60_000,
          maxBytes: MAX_BYTES,
          maxBytesPerTenant: MAX_BYTES_PER_TENANT,
          maxEntryBytes: MAX_ENTRY_BYTES,
        },
      },
      { clock: new FakeClock() },
    );
    store = current.app.get<MemoryIdempotencyStore>(IdempotencyStore, { strict: false });
  });

  afterEach(async () => {
    await closeAll(connections);
    await current.close();
  });

  it('keeps an anonymous flood of keyed 100 KiB echoes within maxBytesPerTenant, over REST, batch and MCP', async () => {
    for (let call = 0; call < 30; call++) {
      const answer = await invoke(current.url, 'echo', payload(`rest-${call}`), { 'idempotency-key': `rest-${call}` });
      expect(answer.status).toBe(200);
      expect(store.bytesOf('anonymous')).toBeLessThanOrEqual(MAX_BYTES_PER_TENANT);
    }
    for (let round = 0; round < 3; round++) {
      const calls = Array.from({ length: 5 }, (_, entry) => ({
        toolId: 'echo',
        arguments: payload(`batch-${round}-${entry}`),
        idempotencyKey: `batch-${round}-${entry}`,
      }));
      const answer = await send('POST', `${current.url}/v1/tools/batch`, { json: { calls } });
      expect(answer.status).toBe(200);
      expect(store.bytesOf('anonymous')).toBeLessThanOrEqual(MAX_BYTES_PER_TENANT);
    }
    const mcp = await connectMcp(current.url);
    connections.push(mcp);
    for (let call = 0; call < 10; call++) {
      const result = await mcp.client.callTool({
        name: 'echo',
        arguments: payload(`mcp-${call}`),
        _meta: { 'io.bulkhead/idempotency-key': `mcp-${call}` },
      });
      expect(result.isError).toBeFalsy();
      expect(store.bytesOf('anonymous')).toBeLessThanOrEqual(MAX_BYTES_PER_TENANT);
    }

    // About 5 MiB offered, at most 512 KiB kept: the newest outcomes.
    expect(store.bytes).toBeGreaterThan(MAX_BYTES_PER_TENANT - 2 * MAX_ENTRY_BYTES);
    expect(store.bytes).toBeLessThanOrEqual(MAX_BYTES_PER_TENANT);
    // The newest, an MCP call's, is replayed whole over REST (a key is the tenant's and the tool's).
    const newest = await invoke(current.url, 'echo', payload('mcp-9'), { 'idempotency-key': 'mcp-9' });
    expect(newest.body).toMatchObject({ result: payload('mcp-9'), replayed: true });
    // The REST keys are the oldest: long dropped, and still never run a second time.
    const oldest = await invoke(current.url, 'echo', payload('rest-0'), { 'idempotency-key': 'rest-0' });
    expect(oldest.status).toBe(422);
    expect(oldest.body).toMatchObject({ error: { kind: 'idempotency_conflict' } });
  });

  it('keeps two tenants within maxBytes together, and one tenant cannot take the other past its own share', async () => {
    for (let call = 0; call < 12; call++) {
      await invoke(current.url, 'echo', payload(`acme-${call}`), { ...ACME.headers, 'idempotency-key': `a-${call}` });
      await invoke(current.url, 'echo', payload(`anon-${call}`), { 'idempotency-key': `n-${call}` });
      expect(store.bytes).toBeLessThanOrEqual(MAX_BYTES);
    }

    expect(store.bytesOf('acme')).toBeGreaterThan(MAX_BYTES_PER_TENANT - 2 * MAX_ENTRY_BYTES);
    expect(store.bytesOf('anonymous')).toBeGreaterThan(MAX_BYTES_PER_TENANT - 2 * MAX_ENTRY_BYTES);
    const replay = await invoke(current.url, 'echo', payload('acme-11'), {
      ...ACME.headers,
      'idempotency-key': 'a-11',
    });
    expect(replay.body).toMatchObject({ result: payload('acme-11'), replayed: true });
  });

  it('answers a call whose outcome is over maxEntryBytes in full, keeps nothing of it, and never runs its key again', async () => {
    const large = { blob: 'y'.repeat(MAX_ENTRY_BYTES) };

    const first = await invoke(current.url, 'echo', large, { 'idempotency-key': 'too-large' });
    const repeat = await invoke(current.url, 'echo', large, { 'idempotency-key': 'too-large' });

    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ result: large });
    expect(store.bytes).toBe(0);
    expect(repeat.status).toBe(422);
    expect(repeat.body).toMatchObject({
      error: { kind: 'idempotency_conflict', message: expect.stringContaining('too large to keep') },
    });
  });
});

import { Logger, type LoggerService } from '@nestjs/common';
import { FakeClock } from '../../../common/fake-clock';
import { RedisKeys } from '../../../store/redis-keys';
import { closeRedis, connectRedis } from '../../../../test/support/redis';
import { describeRedis } from '../../../../test/support/redis-availability';
import type { LlmModuleOptions } from '../../llm.module-definition';
import { LlmOutcomes, type StoredResponseFailure } from '../../llm-outcomes';
import { llmSchema } from '../../llm.options';
import type { OutputItem } from '../../wire';
import { parseResponsesRequest } from '../responses-request';
import { MemoryStoredResponsesStore } from './memory-stored-responses.store';
import { RedisStoredResponsesStore } from './redis-stored-responses.store';
import { StoredResponses } from './stored-responses.service';
import type { StoredResponsesStore } from './stored-responses.store';

const SECRET_ANSWER = 'the secret answer';
const OUTPUT: OutputItem[] = [
  {
    type: 'message',
    id: 'msg_1',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: SECRET_ANSWER, annotations: [] }],
  },
];

const optionsOf = (stored: Record<string, unknown> = {}) =>
  ({ llm: llmSchema.parse({ responses: { stored } }), budgeted: false }) as LlmModuleOptions;

const request = (body: Record<string, unknown>) => parseResponsesRequest({ model: 'route', ...body });

function servicesOn(store: StoredResponsesStore, stored: Record<string, unknown> = {}) {
  const outcomes = new LlmOutcomes();
  const failures: StoredResponseFailure[] = [];
  outcomes.onStoredResponseFailure((failure) => failures.push(failure));
  return { service: new StoredResponses(store, optionsOf(stored), outcomes), failures };
}

describe('StoredResponses', () => {
  const memory = () =>
    new MemoryStoredResponsesStore(new FakeClock(), { maxBytes: 1 << 20, maxResponseBytes: 1 << 16 });

  it("keeps an answer when the request's store is true or absent, and says so in the resolved request", async () => {
    const store = memory();
    const { service } = servicesOn(store);

    for (const [id, body] of [
      ['resp_absent', { input: 'hi' }],
      ['resp_true', { input: 'hi', store: true }],
      ['resp_false', { input: 'hi', store: false }],
    ] as const) {
      const resolved = await service.resolve('acme', request(body));
      expect(service.keep('acme', resolved, id, OUTPUT)).toBe(id !== 'resp_false');
    }

    expect(store.response('acme', 'resp_absent')).toEqual({
      id: 'resp_absent',
      input: [{ type: 'message', role: 'user', content: 'hi' }],
      output: OUTPUT,
    });
    expect(store.response('acme', 'resp_true')).not.toBeNull();
    expect(store.response('acme', 'resp_false')).toBeNull();
  });

  it('counts and logs an answer too large to keep, which still settles', async () => {
    const written: string[] = [];
    Logger.overrideLogger({
      log: () => undefined,
      warn: (line: unknown) => written.push(String(line)),
      error: () => undefined,
    } as LoggerService);
    const small = new MemoryStoredResponsesStore(new FakeClock(), { maxBytes: 1 << 20, maxResponseBytes: 64 });
    const { service, failures } = servicesOn(small);
    const resolved = await service.resolve('acme', request({ input: 'my secret question' }));

    try {
      expect(service.keep('acme', resolved, 'resp_1', OUTPUT)).toBe(false);
    } finally {
      Logger.overrideLogger(false);
    }

    expect(small.response('acme', 'resp_1')).toBeNull();
    expect(failures).toEqual([{ operation: 'too_large' }]);
    expect(written).toEqual([expect.stringContaining('larger than llm.responses.stored.maxResponseBytes')]);
  });

  it('reads nothing for a request without references: it resolves at once', () => {
    const { service } = servicesOn(memory());

    const resolved = service.resolve('acme', request({ input: 'hi' }));

    expect(resolved).toMatchObject({ input: 'hi', store: true });
  });

  it('keeps nothing when turned off, and refuses a reference saying why', () => {
    const store = memory();
    const { service } = servicesOn(store, { enabled: false });

    expect(service.resolve('acme', request({ input: 'hi' }))).toMatchObject({ store: false });
    expect(() => service.resolve('acme', request({ input: 'x', previous_response_id: 'resp_1' }))).toThrow(
      'previous_response_id: this service keeps no responses (llm.responses.stored.enabled is false)',
    );
    expect(() => service.resolve('acme', request({ input: [{ type: 'item_reference', id: 'msg_1' }] }))).toThrow(
      /^input: this service keeps no responses/,
    );
  });
});

describeRedis('StoredResponses on a Redis that does not answer', () => {
  let written: Array<[string, string]>;

  beforeEach(() => {
    written = [];
    const keep = (level: string) => (message: unknown) => written.push([level, String(message)]);
    Logger.overrideLogger({ log: keep('log'), warn: keep('warn'), error: keep('error') } as LoggerService);
  });

  afterEach(() => Logger.overrideLogger(false));

  async function onClosedRedis() {
    const closed = await connectRedis();
    await closeRedis(closed);
    return servicesOn(new RedisStoredResponsesStore(closed, new RedisKeys('bh-test:closed:'), 1 << 16));
  }

  it('settles a failed write without rejecting, counts it, and logs it without content', async () => {
    const { service, failures } = await onClosedRedis();
    const resolved = await service.resolve('acme', request({ input: 'my secret question' }));

    await expect(Promise.resolve(service.keep('acme', resolved, 'resp_1', OUTPUT))).resolves.toBe(false);

    expect(failures).toEqual([{ operation: 'write' }]);
    expect(written).toEqual([['warn', expect.stringContaining('failed a write; the answer went out unkept')]]);
    expect(JSON.stringify(written)).not.toMatch(/secret/);
  });

  it('fails a request that needs a read as unavailable, and counts it', async () => {
    const { service, failures } = await onClosedRedis();

    await expect(
      Promise.resolve(service.resolve('acme', request({ input: 'x', previous_response_id: 'resp_1' }))),
    ).rejects.toMatchObject({ kind: 'unavailable', status: 503 });

    expect(failures).toEqual([{ operation: 'read' }]);
  });
});

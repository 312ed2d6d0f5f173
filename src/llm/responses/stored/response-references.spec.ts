import { isResilienceError, type ResilienceError, toEnvelope } from '../../../common';
import { FakeClock } from '../../../common/fake-clock';
import { parseResponsesRequest } from '../responses-request';
import { MemoryStoredResponsesStore } from './memory-stored-responses.store';
import { hasReferences, MAX_ITEM_REFERENCES, resolveReferences } from './response-references';
import { keptResponse } from './stored-responses-store.contract';

const TTL_MS = 60_000;

/** The ResilienceError `resolving` rejects with; fails the test when it resolves. */
async function thrown(resolving: Promise<unknown>): Promise<ResilienceError> {
  const error = await resolving.then(
    () => new Error('resolved'),
    (reason: unknown) => reason,
  );
  if (!isResilienceError(error)) throw error;
  return error;
}

describe('resolving the references of a Responses request', () => {
  let store: MemoryStoredResponsesStore;

  beforeEach(() => {
    store = new MemoryStoredResponsesStore(new FakeClock(), { maxBytes: 1024 * 1024, maxResponseBytes: 64 * 1024 });
    store.keep('acme', keptResponse('resp_1'), TTL_MS);
  });

  const request = (body: Record<string, unknown>) => parseResponsesRequest({ model: 'route', ...body });

  it('tells a request with references from one without', () => {
    expect(hasReferences(request({ input: 'hi' }))).toBe(false);
    expect(hasReferences(request({ input: [{ role: 'user', content: 'hi' }] }))).toBe(false);
    expect(hasReferences(request({ input: 'hi', previous_response_id: 'resp_1' }))).toBe(true);
    expect(hasReferences(request({ input: [{ type: 'item_reference', id: 'msg_resp_1_0' }] }))).toBe(true);
  });

  it("puts the previous response's input and output before the new input, and not its instructions", async () => {
    const resolved = await resolveReferences(
      request({ instructions: 'Be brief.', previous_response_id: 'resp_1', input: '21 C it is' }),
      'acme',
      store,
    );

    const kept = keptResponse('resp_1');
    expect(resolved.input).toEqual([
      ...kept.input,
      ...kept.output,
      { type: 'message', role: 'user', content: '21 C it is' },
    ]);
    expect(resolved.instructions).toBe('Be brief.');
    expect(resolved.previous_response_id).toBe('resp_1');
  });

  it('replaces each item reference with the kept item, where it stands', async () => {
    const resolved = await resolveReferences(
      request({
        input: [
          { role: 'user', content: 'weather?' },
          { type: 'item_reference', id: 'msg_resp_1_0' },
          { type: 'function_call', call_id: 'call_resp_1', name: 'weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_resp_1', output: '21 C' },
        ],
      }),
      'acme',
      store,
    );

    expect(resolved.input).toEqual([
      { role: 'user', content: 'weather?' },
      keptResponse('resp_1').output[0],
      { type: 'function_call', call_id: 'call_resp_1', name: 'weather', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_resp_1', output: '21 C' },
    ]);
  });

  it('reads an item named twice once, and refuses more distinct references than it reads', async () => {
    const twice = await resolveReferences(
      request({
        input: [
          { type: 'item_reference', id: 'msg_resp_1_0' },
          { type: 'item_reference', id: 'msg_resp_1_0' },
        ],
      }),
      'acme',
      store,
    );
    const many = Array.from({ length: MAX_ITEM_REFERENCES + 1 }, (_, index) => ({
      type: 'item_reference',
      id: `m_${index}`,
    }));

    expect(twice.input).toEqual([keptResponse('resp_1').output[0], keptResponse('resp_1').output[0]]);
    await expect(resolveReferences(request({ input: many }), 'acme', store)).rejects.toMatchObject({
      kind: 'invalid_request',
      message: `input: at most ${MAX_ITEM_REFERENCES} distinct item references`,
    });
  });

  it("refuses a previous response it does not have with OpenAI's own error, for another tenant too", async () => {
    for (const [tenant, id] of [
      ['acme', 'resp_unknown'],
      ['other', 'resp_1'],
    ]) {
      const error = await thrown(resolveReferences(request({ input: 'x', previous_response_id: id }), tenant, store));

      expect(error.status).toBe(400);
      expect(toEnvelope(error, { openai: true }).error).toMatchObject({
        kind: 'invalid_request',
        message: `Previous response with id '${id}' not found.`,
        code: 'previous_response_not_found',
        param: 'previous_response_id',
      });
    }
  });

  it("refuses an item it does not have with OpenAI's own error, naming the item", async () => {
    const error = await thrown(
      resolveReferences(request({ input: [{ type: 'item_reference', id: 'msg_gone' }] }), 'acme', store),
    );

    expect(toEnvelope(error, { openai: true }).error).toMatchObject({
      kind: 'invalid_request',
      message: "Item with id 'msg_gone' not found.",
      param: 'input',
    });
  });
});

import type { ChatRequest } from '../chat.types';
import { cappedRequest } from './capped-request';

const BASE: ChatRequest = { model: 'chat', messages: [{ role: 'user', content: 'hi' }] };

describe('cappedRequest', () => {
  it("sends the route's cap when the client set none", () => {
    expect(cappedRequest(BASE, 4096)).toEqual({ request: { ...BASE, max_tokens: 4096 }, outputCap: 4096 });
  });

  it.each([
    [{ max_tokens: 300 }, 300],
    [{ max_completion_tokens: 200 }, 200],
  ])('keeps the one cap the client set (%p), above the route default too', (caps, cap) => {
    const request = { ...BASE, ...caps };
    expect(cappedRequest(request, 100)).toEqual({ request, outputCap: cap });
  });

  it.each([[{ max_tokens: 500, max_completion_tokens: 300 }], [{ max_tokens: 300, max_completion_tokens: 500 }]])(
    'holds a request that set both (%p) to the smaller, in both',
    (caps) => {
      const { request, outputCap } = cappedRequest({ ...BASE, ...caps }, 4096);
      expect(outputCap).toBe(300);
      expect(request).toMatchObject({ max_tokens: 300, max_completion_tokens: 300 });
    },
  );

  it('leaves a request alone whose two caps agree', () => {
    const request = { ...BASE, max_tokens: 300, max_completion_tokens: 300 };
    expect(cappedRequest(request, 4096).request).toBe(request);
  });
});

import { chatBody, clientHeaders } from './client-shapes';

/** An object's shape as V8 sees it: its keys, in order. */
const shapeOf = (value: object) => Object.keys(value).join(',');
/** More shapes than V8 follows one by one at a read: past this, a read takes any shape. */
const V8_POLYMORPHIC_SHAPES = 4;

describe('what the warm-up sends, shaped as clients shape it', () => {
  const messages = [{ role: 'user', content: 'hi' }];

  it('sends headers in more shapes than V8 follows one by one, every one with the key and the body type', () => {
    const sets = Array.from({ length: 28 }, (_, n) => clientHeaders(n, 'Bearer k'));

    expect(new Set(sets.map(shapeOf)).size).toBeGreaterThan(V8_POLYMORPHIC_SHAPES);
    for (const headers of sets) {
      expect(headers).toMatchObject({ authorization: 'Bearer k', 'content-type': 'application/json' });
    }
  });

  it('gives each call its own call id', () => {
    const ids = Array.from({ length: 28 }, (_, n) => clientHeaders(n, 'Bearer k')['x-call-id']).filter(Boolean);

    expect(ids.length).toBeGreaterThan(1);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it.each([false, true])('sends chat bodies in more shapes than V8 follows, streamed: %s', (stream) => {
    const bodies = Array.from({ length: 12 }, (_, n) => chatBody(n, 'route', messages, stream));

    expect(new Set(bodies.map(shapeOf)).size).toBeGreaterThan(V8_POLYMORPHIC_SHAPES);
    for (const body of bodies) expect(body).toMatchObject({ model: 'route', messages, ...(stream ? { stream } : {}) });
    if (!stream) for (const body of bodies) expect(body).not.toHaveProperty('stream');
  });
});

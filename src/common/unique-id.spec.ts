import { UniqueIds } from './unique-id';

describe('UniqueIds', () => {
  it('makes distinct ids that fit a call id: [A-Za-z0-9_-], at most 48 characters', () => {
    const ids = new UniqueIds();
    const made = Array.from({ length: 10_000 }, () => ids.next());

    expect(new Set(made).size).toBe(made.length);
    for (const id of made) expect(id).toMatch(/^[A-Za-z0-9_-]{1,48}$/);
  });

  it('makes different ids in two processes (two random prefixes), counting from the same start', () => {
    const first = new UniqueIds();
    const second = new UniqueIds();

    expect(first.next()).not.toBe(second.next());
  });

  it('is a 16-character process prefix and a base-36 count (at most 11 digits: 48 characters in all)', () => {
    const ids = new UniqueIds(Buffer.alloc(12, 0xff));

    expect(ids.next()).toBe('________________-1');
    expect(ids.next()).toBe('________________-2');
    expect(Number.MAX_SAFE_INTEGER.toString(36)).toHaveLength(11);
  });
});

import { randomBytes } from 'node:crypto';

/**
 * Ids unique across processes and restarts, without a random draw per id: 96 random bits
 * drawn once per process (16 base64url characters), then a counter in base 36. Call ids and
 * budget reservation ids are made on every call; `randomUUID` builds its 36 characters from
 * a buffer each time and cost as much as the rest of an id's use. Not secrets: nothing may
 * rely on an id being hard to guess.
 */
export class UniqueIds {
  private readonly prefix: string;
  private count = 0;

  constructor(random: Buffer = randomBytes(12)) {
    this.prefix = random.toString('base64url');
  }

  /** The next id: at most 16 + 1 + 11 characters of `[A-Za-z0-9_-]`. */
  next(): string {
    return `${this.prefix}-${(++this.count).toString(36)}`;
  }
}

/** The process's ids. */
export const uniqueIds = new UniqueIds();

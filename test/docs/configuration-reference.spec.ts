import { readFileSync } from 'node:fs';
import { configReference, REFERENCE_FILE } from '../../scripts/config-reference';

describe('docs/configuration-reference.md', () => {
  it('is the reference the config schema draws today (npm run config-reference writes it)', () => {
    expect(readFileSync(REFERENCE_FILE, 'utf8')).toBe(configReference());
  });

  it('names keys that only some kinds of a mapping take, with the kinds', () => {
    const reference = configReference();

    expect(reference).toContain('| `store.url` | string (`^rediss?:\\/\\/`) |  |  | kind `"redis"` |');
    expect(reference).toContain('| `store.sentinel.name` | string (not empty) |  | yes | kind `"redis"` |');
    expect(reference).toContain('| `llm.routes.<name>.hedgeAfterMs` | integer (0–600000) | `0` |  |  |');
  });
});

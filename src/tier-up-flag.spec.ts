import { tierUpFlag, TURBOFAN_AFTER_CALLS } from './tier-up-flag';

describe('tierUpFlag', () => {
  it('asks V8 to optimise after fewer calls than its default', () => {
    expect(tierUpFlag([])).toBe(`--invocation-count-for-turbofan=${TURBOFAN_AFTER_CALLS}`);
    expect(tierUpFlag(['--enable-source-maps'])).toBe(`--invocation-count-for-turbofan=${TURBOFAN_AFTER_CALLS}`);
    expect(TURBOFAN_AFTER_CALLS).toBeLessThan(3_000);
  });

  it("leaves the command line's own setting alone", () => {
    expect(tierUpFlag(['--invocation-count-for-turbofan=3000'])).toBeUndefined();
    expect(tierUpFlag(['--invocation-count-for-turbofan', '100'])).toBeUndefined();
  });
});

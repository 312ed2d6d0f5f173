import { withoutDateSuffix } from './model-id';

describe('withoutDateSuffix', () => {
  it.each([
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-3-5-sonnet-20241022', 'claude-3-5-sonnet'],
    ['claude-opus-4-20250514', 'claude-opus-4'],
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['gpt-4.1-mini-2025-04-14', 'gpt-4.1-mini'],
    ['o3-2025-04-16', 'o3'],
    ['gpt-5.4-2026-03-05', 'gpt-5.4'],
    ['gpt-4o-2024-02-29', 'gpt-4o'],
  ])('reads %p as a snapshot of %p', (model, family) => {
    expect(withoutDateSuffix(model)).toBe(family);
  });

  it.each([
    ['gpt-4o', 'no date'],
    ['gpt-4o-mini-tts', 'a suffix that is not a date'],
    ['claude-opus-4-1', 'a version, not a date'],
    ['gpt-4o-2024-13-01', 'month 13'],
    ['gpt-4o-2023-02-29', 'February 29th of a common year'],
    ['claude-sonnet-4-5-20250931', 'September 31st'],
    ['claude-sonnet-4-5-19990101', 'a year before 2000'],
    ['model-123456789', 'nine digits'],
    ['gpt-4o-2024-08-06-preview', 'a date that is not the end'],
    ['gpt-4o_2024-08-06', 'a date not set off by a dash'],
    ['-20250929', 'a date and nothing before it'],
  ])('leaves %p alone: %s', (model) => {
    expect(withoutDateSuffix(model)).toBeUndefined();
  });

  it('removes one date only', () => {
    expect(withoutDateSuffix('gpt-4o-2024-08-06-2024-08-06')).toBe('gpt-4o-2024-08-06');
  });
});

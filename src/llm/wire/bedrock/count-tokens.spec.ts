import { countedInputTokens, MAX_COUNTED_INPUT_TOKENS, refusesCountingTokens } from './count-tokens';

const VALIDATION = { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' };
const NO_COUNT = { message: "The provided model doesn't support counting tokens." };

describe('countedInputTokens', () => {
  it.each([
    [{ inputTokens: 17 }, 17],
    [{ inputTokens: 0 }, 0],
    [{ inputTokens: MAX_COUNTED_INPUT_TOKENS, requestId: 'r-1' }, MAX_COUNTED_INPUT_TOKENS],
  ])('reads %p as %p', (body, tokens) => {
    expect(countedInputTokens(body)).toBe(tokens);
  });

  it.each([
    [undefined],
    [null],
    [[17]],
    [{}],
    [{ input_tokens: 17 }],
    [{ inputTokens: '17' }],
    [{ inputTokens: -1 }],
    [{ inputTokens: 1.5 }],
    [{ inputTokens: Number.NaN }],
    [{ inputTokens: MAX_COUNTED_INPUT_TOKENS + 1 }],
  ])('reads no count in %p', (body) => {
    expect(countedInputTokens(body)).toBeUndefined();
  });
});

describe('refusesCountingTokens', () => {
  it('is true of the refusal of a model without CountTokens, either spelling of message', () => {
    expect(refusesCountingTokens(400, VALIDATION, NO_COUNT)).toBe(true);
    expect(
      refusesCountingTokens(400, { 'x-amzn-errortype': 'ValidationException' }, { Message: NO_COUNT.message }),
    ).toBe(true);
    expect(refusesCountingTokens(400, VALIDATION, { message: 'This model does not support counting tokens' })).toBe(
      true,
    );
  });

  it.each([
    ['another status', 500, VALIDATION, NO_COUNT],
    ['another type', 400, { 'x-amzn-errortype': 'AccessDeniedException' }, NO_COUNT],
    ['no type', 400, {}, NO_COUNT],
    ['a prompt too long', 400, VALIDATION, { message: 'prompt is too long: 300000 tokens > 200000 maximum' }],
    ['a body not JSON', 400, VALIDATION, undefined],
    ['a message not a string', 400, VALIDATION, { message: 7 }],
  ])('is false of %s', (_case, status, headers, body) => {
    expect(refusesCountingTokens(status, headers, body)).toBe(false);
  });
});

/**
 * V8 optimises a function with TurboFan once it has run 3,000 times (its default). Every function
 * of a request's path runs about once a request, so the service reached its speed only after
 * several thousand requests (bench/llm-proxy's warm-up curve). At 500 it does after about a
 * thousand; the cost is a little more compiling, on V8's background threads, in the first minute.
 */
export const TURBOFAN_AFTER_CALLS = 500;
const FLAG = '--invocation-count-for-turbofan';

/**
 * The V8 flag the service sets at start, or undefined when the command line already sets it
 * (`node --invocation-count-for-turbofan=N dist/main.js`): an operator's choice wins.
 */
export function tierUpFlag(execArgv: readonly string[]): string | undefined {
  if (execArgv.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`))) return undefined;
  return `${FLAG}=${TURBOFAN_AFTER_CALLS}`;
}

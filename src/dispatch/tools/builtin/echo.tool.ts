import type { ToolArguments } from '../../tool';

/** Returns its arguments: the cheapest possible tool, for trying the service and benchmarks. */
export function echo(args: ToolArguments): ToolArguments {
  return args;
}

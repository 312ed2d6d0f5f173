import { Logger, type Provider } from '@nestjs/common';
import { CLOCK, type Clock } from '../common';
import { HttpPools } from '../containment';
import { toolKinds } from './tools/tool-kinds';

/** Injection token of the registry's tool kinds (`ToolKind[]`): {@link toolKinds}, made for this app. */
export const TOOL_KINDS = Symbol('TOOL_KINDS');

export const toolKindsProvider: Provider = {
  provide: TOOL_KINDS,
  useFactory: (clock: Clock, pools: HttpPools) => toolKinds({ clock, pools, logger: new Logger('Bulkhead') }),
  inject: [CLOCK, HttpPools],
};

import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { ToolAccessOptions } from './tool-access.options';
import type { ToolCallAuditOptions } from './tool-call-audit';
import type { ToolConfig } from './tools/tool-schemas';

export interface DispatchModuleOptions {
  /** Tools by id, as in the `tools` section of the config file (`@Tool` methods need none). @default {} */
  tools?: Record<string, ToolConfig>;
  /** Which tool calls get an audit line, as in the `audit` section of the config file. @default {} */
  audit?: ToolCallAuditOptions;
  /** Which tools each tenant may see and call, as in the `toolAccess` section of the config file. @default every tool to every tenant */
  toolAccess?: ToolAccessOptions;
}

export const { ConfigurableModuleClass: DispatchConfigurableModule, MODULE_OPTIONS_TOKEN: DISPATCH_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<DispatchModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();

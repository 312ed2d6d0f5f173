import { ConfigurableModuleBuilder } from '@nestjs/common';
import { DEFAULT_MODULE_EXTRAS, withExtras } from '../common/nest';
import type { ToolCallAuditOptions } from './tool-call-audit';
import type { ToolConfig } from './tools/tool-schemas';

export interface DispatchModuleOptions {
  /** Tools by id, as in the `tools` section of the config file (`@Tool` methods need none). @default {} */
  tools?: Record<string, ToolConfig>;
  /** Which tool calls get an audit line, as in the `audit` section of the config file. @default {} */
  audit?: ToolCallAuditOptions;
}

export const { ConfigurableModuleClass: DispatchConfigurableModule, MODULE_OPTIONS_TOKEN: DISPATCH_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<DispatchModuleOptions>()
    .setClassMethodName('forRoot')
    .setExtras(DEFAULT_MODULE_EXTRAS, withExtras)
    .build();

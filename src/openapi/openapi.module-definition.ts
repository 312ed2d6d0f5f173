import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RouteGroup } from './route-doc';

export interface OpenApiModuleOptions {
  /**
   * The route groups the app mounts (BulkheadModule's `routes`): the document shows these and
   * no others. @default every group
   */
  mounted?: Partial<Record<Exclude<RouteGroup, 'docs'>, boolean>>;
  /** Callers without an API key are let in (`auth.allowAnonymous`): the key is then optional. @default false */
  allowAnonymous?: boolean;
}

export const { ConfigurableModuleClass: OpenApiConfigurableModule, MODULE_OPTIONS_TOKEN: OPENAPI_MODULE_OPTIONS } =
  new ConfigurableModuleBuilder<OpenApiModuleOptions>().setClassMethodName('forRoot').build();

/** Injection token of the app's {@link OpenApiDocument}, built once at start. */
export const OPENAPI_DOCUMENT = Symbol('OPENAPI_DOCUMENT');

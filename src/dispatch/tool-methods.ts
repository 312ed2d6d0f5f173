import { NAME_PATTERN } from '../common';
import type { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { ToolHandler } from './tool';
import { ToolMetadata, type ToolRegistration } from './tool.decorator';

/** A provider method marked `@Tool`, bound to its instance. */
export interface ToolMethod {
  readonly options: ToolRegistration;
  readonly handler: ToolHandler;
  /** `Class.method`, for start-up errors. */
  readonly where: string;
}

/**
 * Every `@Tool` method of the app's static providers, by tool id. Throws what stops start-up:
 * an id that is not a tool's name, a timeout out of range, two methods with one id.
 */
export function findToolMethods(discovery: DiscoveryService, scanner: MetadataScanner): Map<string, ToolMethod> {
  const found = new Map<string, ToolMethod>();
  for (const wrapper of discovery.getProviders()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
    for (const name of scanner.getAllMethodNames(Object.getPrototypeOf(instance))) {
      const options = discovery.getMetadataByDecorator(ToolMetadata, wrapper, name);
      if (!options) continue;
      const method = instance[name] as ToolHandler;
      const where = `${instance.constructor.name}.${name}`;
      if (!NAME_PATTERN.test(options.id)) {
        throw new Error(`@Tool('${options.id}') on ${where}: a tool id is 1-64 letters, digits, "_", "-" or "."`);
      }
      const { timeoutMs } = options;
      if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 1 && timeoutMs <= 600_000)) {
        throw new Error(`@Tool('${options.id}') on ${where}: timeoutMs must be an integer from 1 to 600000`);
      }
      const earlier = found.get(options.id);
      if (earlier) throw new Error(`@Tool('${options.id}') is on both ${earlier.where} and ${where}`);
      found.set(options.id, { options, handler: method.bind(instance), where });
    }
  }
  return found;
}

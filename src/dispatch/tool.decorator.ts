import { DiscoveryService } from '@nestjs/core';
import type { PriorityClass } from '../bulkhead';
import type { BreakerSettings } from '../circuit-breaker';
import type { RetryBudgetSettings, RetrySettings } from '../retry';
import type { ToolArguments, ToolInputSchema } from './tool';

export interface ToolOptions {
  /** The lane of the config the tool runs in. */
  lane: string;
  description?: string;
  /** Per-attempt timeout. @default 30000 */
  timeoutMs?: number;
  /** Safe to run twice with the same arguments. @default false */
  idempotent?: boolean;
  containment?: 'allow' | 'deny';
  /** USD per attempt, charged to the tenant's budget. @default 0 */
  costUsd?: number;
  /** Tokens per call, from the tenant's tokens-per-minute bucket. @default 0 */
  tokens?: number;
  /** Each call gets an audit line (`true`) or never does (`false`); left out: as `audit.toolCalls` says. */
  audit?: boolean;
  /** Its calls' priority class in their lane, unless a caller asks for another. @default 'standard' */
  priorityClass?: PriorityClass;
  /** Retries: the built-in defaults (3 attempts, 100 ms doubling to 2 s) for what is left out. */
  retry?: Partial<RetrySettings> & { budget?: Partial<RetryBudgetSettings> };
  /** The tool's breaker: `breakers.default` of the config for what is left out. */
  breaker?: Partial<BreakerSettings>;
  /** Throws a ResilienceError of kind `schema` for arguments the tool cannot take. */
  validate?: (args: ToolArguments) => void;
  /**
   * The JSON Schema (draft 2020-12, `type: 'object'`) of the arguments: they are checked against
   * it before `validate` (a `schema` error naming the first problem), and MCP's `tools/list`
   * shows it to agents.
   */
  inputSchema?: ToolInputSchema;
}

export interface ToolRegistration extends ToolOptions {
  id: string;
}

/** The discoverable metadata behind `@Tool`: the registry reads it with DiscoveryService. */
export const ToolMetadata = DiscoveryService.createDecorator<ToolRegistration>();

/**
 * Registers a provider method as a tool, called as `method(args, context)`. Options in the
 * config file's `tools.<id>` (kind `code`) override the decorator's.
 */
export const Tool = (id: string, options: ToolOptions): MethodDecorator => ToolMetadata({ id, ...options });

import { DEFAULT_PRIORITY, type PriorityClass } from '../../bulkhead';
import type { ToolResilienceSettings } from '../tool-resilience';
import type { ToolKindContext } from './tool-kind';

/** What an entry of the config that is a tool of its own says (every kind but `code`, whose method says it). */
export interface ConfigToolSettings extends ToolResilienceSettings {
  readonly kind: string;
  readonly lane: string;
  readonly description?: string;
  readonly timeoutMs: number;
  readonly idempotent: boolean;
  readonly containment: 'allow' | 'deny';
  readonly costUsd?: number;
  readonly tokens?: number;
  readonly audit?: boolean;
  readonly priorityClass?: PriorityClass;
  /** The server an http or mcp entry calls. */
  readonly url?: string;
}

/**
 * What every tool of a config entry has, whatever its kind: everything of its definition but
 * `validate`, `inputSchema` and `handler`, its breaker (named after it) registered.
 */
export function configToolBasics(id: string, config: ConfigToolSettings, ctx: ToolKindContext) {
  return {
    id,
    kind: config.kind,
    lane: config.lane,
    description: config.description,
    timeoutMs: config.timeoutMs,
    idempotent: config.idempotent,
    containment: config.containment,
    costUsd: config.costUsd ?? 0,
    tokens: config.tokens ?? 0,
    audit: config.audit,
    priority: config.priorityClass ?? DEFAULT_PRIORITY,
    upstream: config.url === undefined ? undefined : originOf(config.url),
    ...ctx.resilience(id, config.timeoutMs, config.containment, config),
  };
}

/** A URL's origin (scheme, host, port): never its credentials, path or query, which may hold secrets. */
function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

import type { ZodType } from 'zod';
import type { Clock } from '../../common';
import type { ToolDefinition } from '../tool';
import type { ToolMethod } from '../tool-methods';
import type { ToolResilience, ToolResilienceSettings } from '../tool-resilience';

/** What a kind's entry of the config has at least: the `kind` that picks the kind. */
export interface ToolKindConfig {
  readonly kind: string;
}

/** What the registry hands a kind while it builds the tools of the config, once, at start-up. */
export interface ToolKindContext {
  readonly clock: Clock;
  /** The `@Tool` method of that id, if a provider has one (a kind that {@link ToolKind.overridesToolMethod} builds on it). */
  toolMethod(id: string): ToolMethod | undefined;
  /**
   * Tool `id`'s retry policy, retry budget and breaker (registered under its id): the built-in
   * defaults, then `options` (a `@Tool` method's), then `config` (the entry's).
   */
  resilience(
    id: string,
    timeoutMs: number,
    containment: 'allow' | 'deny',
    config?: ToolResilienceSettings,
    options?: ToolResilienceSettings,
  ): ToolResilience;
}

/**
 * One kind of tool of the config (`tools.<id>.kind`): how its entries become tools. A kind lives
 * in a folder of its own under src/dispatch/tools/ and joins the one list of kinds
 * (`tool-kinds.ts`); its entry's schema is `schema`, a member of the config's `tools` union
 * (`tool-schemas.ts`). The
 * registry knows no kind by name: it finds an entry's kind by `kind`, checks that no two tools
 * share an id, and registers what `build` answers.
 */
export interface ToolKind<C extends ToolKindConfig = ToolKindConfig> {
  /** The `kind` its entries name. */
  readonly kind: C['kind'];
  /** Its entry's schema (`<kind>.options.ts` in its folder), as the config validates it: a member of `TOOL_SCHEMAS`. */
  readonly schema: ZodType<C>;
  /**
   * Its entries name a `@Tool` method and override its options (kind `code`). An entry of any
   * other kind may not share an id with a `@Tool` method.
   */
  readonly overridesToolMethod?: boolean;
  /** Called once at start-up, before any entry is built, with all of this kind's entries in config order. */
  prepare?(entries: ReadonlyArray<readonly [string, C]>): Promise<void>;
  /**
   * For a kind whose entries import tools from elsewhere (an upstream MCP server's): the ids of
   * the tools entry `id` registers, each then built by {@link build}. Without it, an entry is one
   * tool, named after its entry.
   */
  importedIds?(id: string, config: C): string[];
  /** Tool `id` of entry `config`, frozen: what the registry serves. Throws what stops start-up. */
  build(id: string, config: C, ctx: ToolKindContext): ToolDefinition;
  /**
   * Called once after every tool is built, awaited before the app serves: what the kind checks of
   * its built tools (the mcp kind compares each upstream tool's definition with its pin).
   */
  start?(): Promise<void>;
  /** Whether tool `id` of this kind is listed now (an upstream tool quarantined by its pin is not). @default true */
  listed?(id: string): boolean;
  /** Calls `listener` when what the kind shows of its tools changes after start-up; returns its remover. */
  onChange?(listener: () => void): () => void;
  /** Ends what the kind holds (sessions, timers): after the shutdown drain, or when start-up fails. */
  close?(): Promise<void>;
}

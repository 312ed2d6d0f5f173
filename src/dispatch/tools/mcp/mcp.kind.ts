import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { type Clock, isResilienceError, NAME_PATTERN } from '../../../common';
import { type McpUpstream, McpUpstreams, type PoolSource } from '../../../mcp-client';
import type { ToolPins } from '../../../mcp-pinning';
import type { ToolArguments, ToolDefinition, ToolHandler, ToolInputSchema } from '../../tool';
import { compileInputCheck } from '../../tool-input-check';
import { configToolBasics } from '../config-tool';
import type { ToolKind, ToolKindContext } from '../tool-kind';
import { type McpToolConfig, mcpToolSchema } from './mcp.options';
import { mcpTool } from './mcp.tool';
import { UpstreamToolPins } from './upstream-tool-pins';
import { UpstreamToolSchema } from './upstream-tool-schema';

/** What the mcp kind logs through. */
export interface KindLogger {
  log(message: string): void;
  warn(message: string): void;
}

/** The parts of an mcp tool's definition that follow its server's listing (getters: read them, never spread them). */
export interface McpToolParts {
  readonly description: string | undefined;
  readonly inputSchema: ToolInputSchema | undefined;
  readonly validate: (args: ToolArguments) => void;
  readonly handler: ToolHandler;
}

/**
 * `kind: mcp`, the tools of upstream MCP servers. At start-up, every server the entries name is
 * listed once, in parallel, each within the longest `timeoutMs` of its entries, through the
 * normal pool.
 *
 * - `tool: <name>` and `tools: [names]` are registered whatever the server does, so a server
 *   that is down does not stop the service: their schemas are unknown until it answers (it is
 *   listed again in the background, on the clock). A server that answers without a named tool
 *   is a mistake in the config, and stops start-up.
 * - `tools: '*'` registers what the server lists, so start-up needs it: when it cannot be
 *   listed, start-up fails and says to name the tools instead. Tools it lists later (after a
 *   `list_changed`) are not added (the registry is fixed once started); that is logged.
 */
export class McpToolKind implements ToolKind<McpToolConfig> {
  readonly kind = 'mcp';
  readonly schema = mcpToolSchema;
  private readonly upstreams: McpUpstreams;
  private readonly servers = new Map<string, McpUpstream>();
  /** Each imported tool's entry and name on its server, by tool id. */
  private readonly imports = new Map<string, { entryId: string; upstreamName: string }>();
  private readonly pins: UpstreamToolPins;

  constructor(
    pools: PoolSource,
    clock: Clock,
    private readonly logger: KindLogger,
    pins: ToolPins,
  ) {
    this.upstreams = new McpUpstreams(pools, clock);
    this.pins = new UpstreamToolPins(pins);
  }

  /** Lists the servers of the config's mcp entries; throws what stops start-up. */
  async prepare(entries: ReadonlyArray<readonly [string, McpToolConfig]>): Promise<void> {
    const byServer = new Map<McpUpstream, Array<[string, McpToolConfig]>>();
    for (const [id, config] of entries) {
      const server = this.upstreams.serverFor({
        url: config.url,
        headers: config.headers ?? {},
        timeoutMs: config.timeoutMs,
      });
      this.servers.set(id, server);
      byServer.set(server, [...(byServer.get(server) ?? []), [id, config]]);
    }
    await Promise.all([...byServer].map(([server, group]) => this.discoverOne(server, group)));
  }

  /** The ids of the tools entry `id` registers: its own for `tool`, `<id>.<name>` for each of `tools`. */
  importedIds(id: string, config: McpToolConfig): string[] {
    return this.toolsOf(id, config).map(([toolId, upstreamName]) => {
      this.imports.set(toolId, { entryId: id, upstreamName });
      return toolId;
    });
  }

  /** The upstream tool `toolId` of an entry, with the entry's settings. */
  build(toolId: string, config: McpToolConfig, ctx: ToolKindContext): ToolDefinition {
    const imported = this.imports.get(toolId);
    if (!imported) throw new Error(`tool '${toolId}': no mcp entry of the config imports it`);
    // Its description and schema are getters that follow the server's listing: copied, not spread.
    const parts = Object.getOwnPropertyDescriptors(this.parts(imported.entryId, toolId, imported.upstreamName, config));
    return Object.freeze(
      Object.defineProperties({ ...configToolBasics(toolId, config, ctx) }, parts),
    ) as ToolDefinition;
  }

  /** The tools entry `id` registers, as [tool id, the upstream's name]. */
  private toolsOf(id: string, config: McpToolConfig): Array<[string, string]> {
    if (config.tool !== undefined) return [[id, config.tool]];
    if (Array.isArray(config.tools)) return config.tools.map((name) => [`${id}.${name}`, name]);
    const listed = [...(this.server(id).tools?.keys() ?? [])];
    const fitting = listed.filter((name) => NAME_PATTERN.test(`${id}.${name}`));
    const left = listed.filter((name) => !fitting.includes(name));
    if (left.length > 0) {
      this.logger.warn(`tools.${id}: not imported, their ids would be longer than 64 characters: ${left.join(', ')}`);
    }
    return fitting.map((name) => [`${id}.${name}`, name]);
  }

  /** What a definition of the upstream tool `upstreamName`, registered as `toolId` by entry `entryId`, reads from its server. */
  private parts(entryId: string, toolId: string, upstreamName: string, config: McpToolConfig): McpToolParts {
    const server = this.server(entryId);
    const handler = mcpTool(toolId, upstreamName, server, config) as ToolHandler;
    const pin = this.pins.track(toolId, upstreamName, server, config);
    const pins = this.pins;
    const configured = config.inputSchema as ToolInputSchema | undefined;
    if (configured) {
      const check = compileInputCheck(toolId, configured);
      return {
        description: config.description,
        inputSchema: configured,
        validate: (args) => {
          pins.admit(pin);
          check(args);
        },
        handler,
      };
    }
    const upstream = new UpstreamToolSchema(toolId, upstreamName, server, (message) => this.logger.warn(message));
    return {
      get description() {
        return config.description ?? upstream.description;
      },
      get inputSchema() {
        return upstream.inputSchema;
      },
      validate: (args) => {
        // A quarantined tool is refused before anything else looks at the call.
        pins.admit(pin);
        upstream.validate(args);
      },
      handler,
    };
  }

  /** Compares every tool's definition with its pin before the app serves, and every later listing. */
  start(): Promise<void> {
    return this.pins.start();
  }

  /** Whether tool `id` is listed: not while quarantined by its pin. */
  listed(id: string): boolean {
    return this.pins.served(id);
  }

  /** Calls `listener` when any server's listing, or a pin, changes what the registry shows; returns its remover. */
  onChange(listener: () => void): () => void {
    const removers = [...this.upstreams.all().map((server) => server.onChange(listener)), this.pins.onChange(listener)];
    return () => removers.forEach((remove) => remove());
  }

  /** Ends every upstream session (through the pools, which must still be open). */
  close(): Promise<void> {
    return this.upstreams.close();
  }

  private server(id: string): McpUpstream {
    const server = this.servers.get(id);
    if (!server) throw new Error(`tools.${id}: no upstream MCP server was discovered for it`);
    return server;
  }

  private async discoverOne(server: McpUpstream, group: Array<[string, McpToolConfig]>): Promise<void> {
    const where = `the MCP server at ${shown(server.url)}`;
    const waitMs = Math.max(...group.map(([, config]) => config.timeoutMs));
    let listed: ReadonlyMap<string, unknown>;
    try {
      listed = await server.list(waitMs);
    } catch (error) {
      const importing = group.find(([, config]) => config.tools === '*');
      if (importing) {
        throw new Error(
          `tools.${importing[0]}: imports every tool of ${where}, which could not be listed at start-up ` +
            `(${reason(error)}); name its tools (tools: [a, b]) to start without it`,
        );
      }
      this.logger.warn(
        `${where} could not be listed at start-up (${reason(error)}): ${group.map(([id]) => `tools.${id}`).join(', ')} ` +
          'registered without input schemas; listing again in the background',
      );
      server.listUntilAnswered();
      return;
    }
    for (const [id, config] of group) {
      const named = config.tool !== undefined ? [config.tool] : Array.isArray(config.tools) ? config.tools : [];
      const missing = named.filter((name) => !listed.has(name));
      if (missing.length > 0) {
        const has = [...listed.keys()].slice(0, 20).join(', ') || 'none';
        throw new Error(
          `tools.${id}: ${where} lists no tool ${missing.map((name) => `'${name}'`).join(', ')} (it lists: ${has})`,
        );
      }
    }
    for (const [id, config] of group) {
      // A pin of a tool the server does not list pins nothing: said now, not found out later.
      const unlisted = Object.keys(config.pins ?? {}).filter((name) => !listed.has(name));
      if (unlisted.length > 0) {
        this.logger.warn(`tools.${id}: pins ${unlisted.join(', ')}, which ${where} does not list`);
      }
    }
    const imported = group.filter(([, config]) => config.tools === '*').map(([id]) => id);
    if (imported.length > 0) this.warnOfNewTools(server, imported);
  }

  /** Tools an importing server lists after start-up are not registered: the operator hears of them. */
  private warnOfNewTools(server: McpUpstream, entries: string[]): void {
    const known = new Set(server.tools?.keys());
    server.onChange(() => {
      const added = [...(server.tools?.keys() ?? [])].filter((name) => !known.has(name));
      if (added.length === 0) return;
      for (const name of added) known.add(name);
      this.logger.warn(
        `${entries.map((id) => `tools.${id}`).join(', ')}: the MCP server at ${shown(server.url)} now lists ` +
          `${added.join(', ')}, which are registered only at start-up: restart to import them`,
      );
    });
  }
}

/** A server's URL without its query (it may carry a key) or credentials. */
function shown(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** Why a listing failed, in words that hold no header or body of the upstream's. */
function reason(error: unknown): string {
  if (isResilienceError(error)) return `${error.kind}: ${error.message}`;
  if (error instanceof McpError) return `JSON-RPC error ${error.code}`;
  if (error instanceof StreamableHTTPError) return `HTTP ${error.code}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  return error instanceof Error ? error.name : 'unknown error';
}

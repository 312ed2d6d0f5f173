import { EVERYONE, noop, UNCONTAINED } from '../../../common';
import type { McpUpstream } from '../../../mcp-client';
import type { ToolPin, ToolPins } from '../../../mcp-pinning';
import type { McpToolConfig } from './mcp.options';

interface PinnedTool {
  readonly pin: ToolPin;
  readonly upstreamName: string;
  readonly server: McpUpstream;
}

/**
 * The pins of the mcp kind's tools: each tool's definition goes to {@link ToolPins} whenever its
 * server's listing brings one (at start-up, when listed again in the background, after a call
 * to a server never listed, after `notifications/tools/list_changed`), so a change at any of
 * them is caught.
 */
export class UpstreamToolPins {
  private readonly tools = new Map<string, PinnedTool>();
  private readonly following = new Set<McpUpstream>();

  constructor(private readonly pins: ToolPins) {}

  /** Tool `toolId`, `upstreamName` on `server`, pinned as its entry says; answers its pin. */
  track(
    toolId: string,
    upstreamName: string,
    server: McpUpstream,
    config: Pick<McpToolConfig, 'pinning' | 'pins' | 'containment'>,
  ): ToolPin {
    const pin = this.pins.track(toolId, {
      mode: config.pinning,
      configPin: config.pins?.[upstreamName],
      // Its events are seen by those who may call it.
      audience: config.containment === 'deny' ? UNCONTAINED : EVERYONE,
    });
    this.tools.set(toolId, { pin, upstreamName, server });
    return pin;
  }

  /** Throws `tool_changed` when the tool is quarantined. */
  admit(pin: ToolPin): void {
    this.pins.admit(pin);
  }

  /** Whether tool `toolId` is listed: all but a quarantined one (and tools of other kinds). */
  served(toolId: string): boolean {
    return this.tools.get(toolId)?.pin.served ?? true;
  }

  /**
   * Compares what every listed server lists now with the pins, before the app serves (so a wrong
   * pin quarantines its tool from the start), and every later listing that changes.
   */
  async start(): Promise<void> {
    const servers = new Set([...this.tools.values()].map((tool) => tool.server));
    for (const server of servers) {
      if (this.following.has(server)) continue;
      this.following.add(server);
      server.onChange(() => this.see(server).catch(noop));
    }
    await Promise.all([...servers].map((server) => this.see(server)));
  }

  /** Calls `listener` when a tool is quarantined or served again; returns its remover. */
  onChange(listener: () => void): () => void {
    return this.pins.onServingChange(listener);
  }

  private async see(server: McpUpstream): Promise<void> {
    const listed = server.tools;
    if (!listed) return;
    const seeing: Array<Promise<void>> = [];
    for (const tool of this.tools.values()) {
      const definition = tool.server === server ? listed.get(tool.upstreamName) : undefined;
      if (definition) seeing.push(this.pins.see(tool.pin, definition));
    }
    await Promise.all(seeing);
  }
}

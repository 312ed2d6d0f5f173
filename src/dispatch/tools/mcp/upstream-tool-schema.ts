import type { McpUpstream, UpstreamTool } from '../../../mcp-client';
import type { ToolArguments, ToolInputSchema } from '../../tool';
import { compileInputCheck } from '../../tool-input-check';

/**
 * An upstream tool's input schema and description as the registry shows and checks them: those
 * of the server's latest listing, so a tool registered while its server was down gets them
 * once the server answers, and a `notifications/tools/list_changed` brings the new ones. Until
 * the server has been listed, any JSON object passes (the upstream checks it).
 */
export class UpstreamToolSchema {
  private compiledFor: UpstreamTool | undefined;
  private check: ((args: ToolArguments) => void) | undefined;

  constructor(
    private readonly toolId: string,
    private readonly upstreamName: string,
    private readonly server: McpUpstream,
    private readonly warn: (message: string) => void,
  ) {}

  get inputSchema(): ToolInputSchema | undefined {
    return this.listed()?.inputSchema as ToolInputSchema | undefined;
  }

  get description(): string | undefined {
    return this.listed()?.description;
  }

  /** Checks `args` against the schema listed last; compiled when the listing changes. */
  validate(args: ToolArguments): void {
    const listed = this.listed();
    if (listed !== this.compiledFor) {
      this.compiledFor = listed;
      this.check = listed ? this.compile(listed) : undefined;
    }
    this.check?.(args);
  }

  private listed(): UpstreamTool | undefined {
    return this.server.tools?.get(this.upstreamName);
  }

  /**
   * Servers write their schemas for other drafts (`$schema` of draft-07 is common); the
   * registry's compiler takes them without that and without an `$id` a listing again would
   * repeat. A schema that still does not compile is left to the upstream to enforce.
   */
  private compile(tool: UpstreamTool): ((args: ToolArguments) => void) | undefined {
    const { $schema: _draft, $id: _id, ...schema } = tool.inputSchema as Record<string, unknown>;
    try {
      return compileInputCheck(this.toolId, schema as ToolInputSchema);
    } catch (error) {
      this.warn(`${(error as Error).message}; its arguments are left to the upstream to check`);
      return undefined;
    }
  }
}

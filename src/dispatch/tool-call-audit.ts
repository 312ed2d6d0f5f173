import { createHash, createHmac } from 'node:crypto';
import type { CallAudit } from '../events';
import { canonicalJson } from '../idempotency';
import type { ToolArguments, ToolDefinition } from './tool';

/** The `audit` section of the config file: which tool calls get an audit line, and how arguments are digested. */
export interface ToolCallAuditOptions {
  /** Every tool's calls get an audit line, but a tool's own `audit: false`. @default false */
  readonly toolCalls?: boolean;
  /**
   * The HMAC key of the arguments' digest. Without one it is a plain SHA-256, which anyone who
   * can guess the arguments (a user id, a short command) can confirm from the log: set a key
   * where the audit lines are read by more people than the arguments are.
   */
  readonly argumentsKey?: string;
}

/**
 * What a tool call's audit line adds (docs/operations.md, "Audit trail"): whether a call is
 * audited (the tool's own `audit`, else `audit.toolCalls`), and its arguments' digest, so a
 * security team can tell who called what and when, and which calls had the same arguments,
 * without the log ever holding them. Decided per call, after the call: a call that is not
 * audited costs one comparison.
 */
export class ToolCallAudit {
  private readonly everyTool: boolean;

  constructor(private readonly options: ToolCallAuditOptions = {}) {
    this.everyTool = options.toolCalls ?? false;
  }

  /** The call's audit fields, or undefined when its tool is not audited. */
  of(tool: ToolDefinition, args: ToolArguments): CallAudit | undefined {
    if (!(tool.audit ?? this.everyTool)) return undefined;
    return { toolKind: tool.kind, upstream: tool.upstream, argumentsDigest: this.digest(args) };
  }

  private digest(args: ToolArguments): string {
    const text = canonicalJsonOrMark(args);
    const { argumentsKey } = this.options;
    return (argumentsKey ? createHmac('sha256', argumentsKey) : createHash('sha256')).update(text).digest('hex');
  }
}

/** The arguments' canonical JSON; a value that has none (circular, from a company's own code) digests as a mark. */
function canonicalJsonOrMark(args: ToolArguments): string {
  try {
    return canonicalJson(args);
  } catch {
    return '(not JSON)';
  }
}

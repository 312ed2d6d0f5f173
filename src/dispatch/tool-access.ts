import type { ToolAccessOptions, ToolAccessRuleConfig } from './tool-access.options';

/** One tenant's rule, its patterns compiled, and what it decided for each tool id it was asked about. */
export class ToolAccessRule {
  private readonly allow: RegExp[];
  private readonly deny: RegExp[];
  /** Asked only about tools of the registry: as large as the registry at most. */
  private readonly decided = new Map<string, boolean>();

  constructor(rule: ToolAccessRuleConfig = {}) {
    this.allow = (rule.allow ?? ['*']).map(patternOf);
    this.deny = (rule.deny ?? []).map(patternOf);
  }

  allows(toolId: string): boolean {
    let allowed = this.decided.get(toolId);
    if (allowed === undefined) {
      allowed =
        this.allow.some((pattern) => pattern.test(toolId)) && !this.deny.some((pattern) => pattern.test(toolId));
      this.decided.set(toolId, allowed);
    }
    return allowed;
  }
}

/**
 * Which tools each tenant may see and call (`toolAccess`, docs/configuration.md): a tenant's own
 * rule, else the default one; a rule allows what its `allow` patterns match and its `deny`
 * patterns do not. A tool a tenant may not call does not exist for it: not listed, and a call
 * answered as for an unknown tool (hiding what it may not use tells it nothing about it).
 */
export class ToolAccess {
  private readonly fallback: ToolAccessRule;
  private readonly byTenant: ReadonlyMap<string, ToolAccessRule>;

  constructor(options: ToolAccessOptions = {}) {
    this.fallback = new ToolAccessRule(options.default);
    this.byTenant = new Map(
      Object.entries(options.tenants ?? {}).map(([tenant, rule]) => [tenant, new ToolAccessRule(rule)]),
    );
  }

  /** The rule `tenant` is held to: the same object for every tenant it holds (lists are kept per rule). */
  ruleOf(tenant: string): ToolAccessRule {
    return this.byTenant.get(tenant) ?? this.fallback;
  }

  allows(tenant: string, toolId: string): boolean {
    return this.ruleOf(tenant).allows(toolId);
  }
}

/** A pattern as a whole-id regular expression: `*` any run, `?` one character, the rest as written. */
function patternOf(pattern: string): RegExp {
  const source = pattern
    .replace(/[.+^${}()|[\]\\-]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}

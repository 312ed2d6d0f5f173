import { z } from 'zod';

/**
 * A tool id pattern: a tool id (letters, digits, `_`, `.`, `-`) where `*` stands for any run of
 * characters (dots included: `crm.*` is every tool of the `crm` entry) and `?` for one.
 */
const toolPattern = () =>
  z.string({ error: 'must be a string' }).regex(/^[A-Za-z0-9_.*?-]{1,128}$/, {
    error: 'must be a tool id or a pattern of one (letters, digits, "_", ".", "-", "*" any run, "?" one character)',
  });

const patterns = () => z.array(toolPattern(), { error: 'must be a list' });

/** Which tools a tenant may see and call: those `allow` matches and `deny` does not. */
export const toolAccessRuleSchema = z.strictObject({
  /** @default ['*'] */
  allow: patterns().default(['*']),
  deny: patterns().default([]),
});

/**
 * The `toolAccess` section of the config file: every tenant's rule (`tenants.<t>`, in place of
 * `default`, not on top of it), and the rule of every tenant without one of its own.
 */
export const toolAccessSchema = z.strictObject({
  default: toolAccessRuleSchema.prefault({}),
  tenants: z.record(z.string(), toolAccessRuleSchema).default({}),
});

export type ToolAccessRuleConfig = z.input<typeof toolAccessRuleSchema>;
/** As the config file gives it, or a company's module options: what is left out is `allow: ['*']`. */
export type ToolAccessOptions = z.input<typeof toolAccessSchema>;

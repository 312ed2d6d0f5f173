import { ANONYMOUS_TENANT } from '../common';
import { UPSTREAM_TOOL_NAME } from '../dispatch';
import { breakerMergeProblems } from './breaker-merge-problems';
import type { Environment } from './env-substitution';
import { NAME_PATTERN } from '../common';

/** The environment variable that alone lets `chaos.enabled: true` through. */
export const ALLOW_CHAOS_VARIABLE = 'BULKHEAD_ALLOW_CHAOS';

/**
 * Problems between sections (a tool naming a lane that does not exist, a breaker named like a
 * tool, a route asking for a semantic cache that is off), and between the file and its
 * environment (chaos enabled where it is not allowed), found on the document as written, so
 * that they are reported together with every other problem instead of only once the rest of the
 * file is valid. Only names that are themselves well formed are checked: a bad name is reported
 * once, as a bad name. With no `env`, nothing is allowed that needs the environment's consent.
 */
export function crossReferenceProblems(document: unknown, env: Environment = {}): string[] {
  if (!isMapping(document)) return [];
  const lanes = isMapping(document.lanes) ? Object.keys(document.lanes) : [];
  const tools = isMapping(document.tools) ? document.tools : {};
  const breakers = isMapping(document.breakers) ? Object.keys(document.breakers) : [];
  const problems: string[] = [];
  const imported = importedToolIds(tools, problems);
  for (const breaker of breakers) {
    if (NAME_PATTERN.test(breaker) && Object.hasOwn(tools, breaker)) {
      problems.push(`breakers.${breaker}: is the breaker of tool '${breaker}': set it under tools.${breaker}.breaker`);
    }
    const entry = imported.get(breaker);
    if (NAME_PATTERN.test(breaker) && entry !== undefined) {
      problems.push(`breakers.${breaker}: is the breaker of tool '${breaker}': set it under tools.${entry}.breaker`);
    }
  }
  problems.push(...breakerMergeProblems(document));
  problems.push(...semanticCacheProblems(document));
  problems.push(...routeTenantProblems(document));
  problems.push(...chaosProblems(document, env));
  // With no lanes at all, that is the problem to report, not every tool's lane.
  if (lanes.length === 0) return problems;
  for (const [toolId, definition] of Object.entries(tools)) {
    const lane = isMapping(definition) ? definition.lane : undefined;
    if (typeof lane === 'string' && NAME_PATTERN.test(lane) && !lanes.includes(lane)) {
      problems.push(`tools.${toolId}.lane: unknown lane '${lane}' (lanes: ${lanes.join(', ')})`);
    }
  }
  const llm = isMapping(document.llm) ? document.llm : {};
  const routes = isMapping(llm.routes) ? llm.routes : {};
  for (const [route, definition] of Object.entries(routes)) {
    const lane = isMapping(definition) ? definition.lane : undefined;
    if (typeof lane === 'string' && NAME_PATTERN.test(lane) && !lanes.includes(lane)) {
      problems.push(`llm.routes.${route}.lane: unknown lane '${lane}' (lanes: ${lanes.join(', ')})`);
    }
  }
  return problems;
}

/**
 * The ids an mcp entry's `tools` list registers (`<entry id>.<name>`), by id, with the entry
 * they come from; an id that is not a valid tool id, or that another entry already is, is a
 * problem. `'*'` imports what the server lists at start-up, which only start-up can check.
 */
function importedToolIds(tools: Record<string, unknown>, problems: string[]): Map<string, string> {
  const imported = new Map<string, string>();
  for (const [entry, definition] of Object.entries(tools)) {
    if (!isMapping(definition) || definition.kind !== 'mcp' || !Array.isArray(definition.tools)) continue;
    if (!NAME_PATTERN.test(entry)) continue;
    definition.tools.forEach((name: unknown, index) => {
      if (typeof name !== 'string' || !UPSTREAM_TOOL_NAME.test(name)) return;
      const id = `${entry}.${name}`;
      const where = `tools.${entry}.tools[${index}]`;
      if (!NAME_PATTERN.test(id)) {
        problems.push(`${where}: registers '${id}', longer than a tool id may be (64 characters)`);
      } else if (Object.hasOwn(tools, id)) {
        problems.push(`${where}: registers '${id}', which is already the id of tools.${id}`);
      } else {
        imported.set(id, entry);
      }
    });
  }
  return imported;
}

/**
 * A route that opts into the semantic cache while `llm.cache.semantic.enabled` is not true: it
 * would silently never hit, so it is a mistake to report. A value that is not a boolean at all
 * is the schema's to report, not this.
 */
function semanticCacheProblems(document: Record<string, unknown>): string[] {
  const llm = isMapping(document.llm) ? document.llm : {};
  const cache = isMapping(llm.cache) ? llm.cache : {};
  const semantic = isMapping(cache.semantic) ? cache.semantic : {};
  if (booleanOf(semantic.enabled ?? false) !== false) return [];
  const routes = isMapping(llm.routes) ? llm.routes : {};
  const problems: string[] = [];
  for (const [route, definition] of Object.entries(routes)) {
    if (isMapping(definition) && booleanOf(definition.semanticCache) === true) {
      problems.push(
        `llm.routes.${route}.semanticCache: needs llm.cache.semantic.enabled: true (the semantic cache is off)`,
      );
    }
  }
  return problems;
}

/**
 * A route's `tenants` may name only tenants of `auth.apiKeys`: a name no key has is a typo, or a
 * tenant whose key was removed, and the route would quietly refuse it. `anonymous` is no
 * configured tenant: callers without a key may use only a route without a list.
 */
function routeTenantProblems(document: Record<string, unknown>): string[] {
  const llm = isMapping(document.llm) ? document.llm : {};
  const routes = isMapping(llm.routes) ? llm.routes : {};
  const auth = isMapping(document.auth) ? document.auth : {};
  const keys = Array.isArray(auth.apiKeys) ? auth.apiKeys : [];
  const configured = new Set<string>();
  for (const key of keys) if (isMapping(key) && typeof key.tenant === 'string') configured.add(key.tenant);
  const known =
    configured.size === 0
      ? 'auth.apiKeys names no tenant'
      : `the tenants of auth.apiKeys: ${[...configured].join(', ')}`;
  const problems: string[] = [];
  for (const [route, definition] of Object.entries(routes)) {
    const tenants = isMapping(definition) ? definition.tenants : undefined;
    if (!Array.isArray(tenants)) continue;
    tenants.forEach((tenant: unknown, index) => {
      if (typeof tenant !== 'string' || !NAME_PATTERN.test(tenant) || configured.has(tenant)) return;
      const where = `llm.routes.${route}.tenants[${index}]`;
      problems.push(
        tenant === ANONYMOUS_TENANT
          ? `${where}: '${ANONYMOUS_TENANT}' cannot be listed: callers without a key may use only a route without tenants`
          : `${where}: unknown tenant '${tenant}' (${known})`,
      );
    });
  }
  return problems;
}

/**
 * `chaos.enabled: true` injects failures on purpose: refused unless the environment says this
 * deployment may rehearse them, so a staging file copied to production stays inert there.
 * Exactly `true` counts; anything else, or the variable unset, refuses. A value that is not a
 * boolean at all is the schema's to report.
 */
function chaosProblems(document: Record<string, unknown>, env: Environment): string[] {
  const chaos = isMapping(document.chaos) ? document.chaos : {};
  if (booleanOf(chaos.enabled) !== true || env[ALLOW_CHAOS_VARIABLE] === 'true') return [];
  return [
    `chaos.enabled: is true, which injects failures on purpose: refused unless the environment variable ` +
      `${ALLOW_CHAOS_VARIABLE}=true is set`,
  ];
}

/** A boolean as the schema reads one (`true`, or `"true"` from `${ENV}`), or undefined. */
function booleanOf(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

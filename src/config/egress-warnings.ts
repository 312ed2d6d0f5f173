import { EgressPolicy, egressRefusalOf } from '../containment';
import type { BulkheadConfig } from './config.schema';

/** A configured upstream: where in the config it is, what it is called, where it points. */
interface ConfiguredUpstream {
  at: string;
  label: string;
  url: string;
}

/**
 * The upstreams the config names that `containment.egress` will refuse, one line each, naming the
 * key path, the target and the setting that would open it. Warnings, not problems: the operator
 * may mean it (a production config that must never reach a loopback server), so the service
 * starts; but a local model server at http://127.0.0.1:11434/v1 refused on every request, with
 * nothing said at start-up, costs a new user an hour. Only what the URL itself tells is judged
 * (scheme, host, an IP literal or `localhost`): no DNS at start-up.
 */
export function egressWarnings(config: BulkheadConfig): string[] {
  const policy = new EgressPolicy(config.containment.egress);
  const warnings: string[] = [];
  for (const upstream of configuredUpstreams(config)) {
    let url: URL;
    try {
      url = new URL(upstream.url);
    } catch {
      continue; // the schema has already refused a URL that does not parse
    }
    const refusal = egressRefusalOf(policy, url);
    if (refusal === undefined) continue;
    // The origin only: a URL's credentials, path or query never reach a log.
    warnings.push(
      `${upstream.at} (${upstream.label} at ${url.origin}): every request to it will be refused ` +
        `as egress_denied: ${refusal.reason}; set ${refusal.setting} if it is meant to be reached`,
    );
  }
  return warnings;
}

/** Every upstream URL of the config: LLM targets with a baseUrl, http tools, mcp upstreams. */
function configuredUpstreams(config: BulkheadConfig): ConfiguredUpstream[] {
  const upstreams: ConfiguredUpstream[] = [];
  for (const [route, definition] of Object.entries(config.llm.routes)) {
    definition.targets.forEach((target, index) => {
      if (target.baseUrl === undefined) return; // a provider's own public API
      const label = `${target.provider}/${target.model}`;
      upstreams.push({ at: `llm.routes.${route}.targets.${index}`, label, url: target.baseUrl });
    });
  }
  for (const [id, tool] of Object.entries(config.tools)) {
    if (tool.kind === 'http' || tool.kind === 'mcp') {
      upstreams.push({ at: `tools.${id}.url`, label: `${tool.kind} tool ${id}`, url: tool.url });
    }
  }
  return upstreams;
}

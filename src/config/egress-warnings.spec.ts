import { parseConfig } from './config.loader';
import type { BulkheadConfig } from './config.schema';
import { egressWarnings } from './egress-warnings';

function config(document: Record<string, unknown>): BulkheadConfig {
  const result = parseConfig(
    {
      lanes: { general: { concurrency: 1, queueCapacity: 1 }, llm: { concurrency: 1, queueCapacity: 1 } },
      ...document,
    },
    {},
  );
  if (!result.ok) throw new Error(result.problems.join('\n'));
  return result.config;
}

const route = (baseUrl: string) => ({
  llm: { routes: { chat: { lane: 'llm', targets: [{ provider: 'openai', model: 'llama3', baseUrl }] } } },
});

describe('egressWarnings', () => {
  it('names a local model server the default egress rules refuse, and the key that opens it', () => {
    expect(egressWarnings(config(route('http://127.0.0.1:11434/v1')))).toEqual([
      "llm.routes.chat.targets.0 (openai/llama3 at http://127.0.0.1:11434): every request to it will be refused as egress_denied: host '127.0.0.1' is a private, loopback, link-local or reserved address (add '127.0.0.1/32'); set containment.egress.allowPrivateCidrs if it is meant to be reached",
    ]);
  });

  it('says nothing once allowPrivateCidrs covers it', () => {
    const opened = {
      ...route('http://127.0.0.1:11434/v1'),
      containment: { egress: { allowPrivateCidrs: ['127.0.0.0/8'] } },
    };
    expect(egressWarnings(config(opened))).toEqual([]);
  });

  it('judges localhost as the loopback addresses it is, an IPv6 literal as itself', () => {
    const [localhost] = egressWarnings(config(route('http://localhost:8000/v1')));
    expect(localhost).toContain("(add '127.0.0.1/32', '::1/128')");
    const [v6] = egressWarnings(config(route('http://[::1]:8000/v1')));
    expect(v6).toContain("host '[::1]'");
    expect(v6).toContain("(add '::1/128')");
  });

  it('names allowHosts for a host outside it, for http tools and mcp upstreams too', () => {
    const warnings = egressWarnings(
      config({
        containment: { egress: { allowHosts: ['api.example.com'] } },
        tools: {
          fetch_page: { lane: 'general', kind: 'http', url: 'https://pages.example.org/fetch' },
          docs: { lane: 'general', kind: 'mcp', url: 'https://mcp.example.org/mcp', tools: ['search'] },
        },
      }),
    );
    expect(warnings).toEqual([
      expect.stringMatching(
        /^tools\.fetch_page\.url \(http tool fetch_page at https:\/\/pages\.example\.org\): .*host 'pages\.example\.org' is not allowed; set containment\.egress\.allowHosts/,
      ),
      expect.stringMatching(
        /^tools\.docs\.url \(mcp tool docs at https:\/\/mcp\.example\.org\): .*set containment\.egress\.allowHosts/,
      ),
    ]);
  });

  it('passes public hosts, a provider without a baseUrl, and names only DNS could place', () => {
    const document = {
      llm: {
        routes: {
          chat: {
            lane: 'llm',
            targets: [
              { provider: 'openai', model: 'gpt-4o', apiKey: 'sk-x' },
              { provider: 'openai', model: 'gpt-4o', baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-x' },
              { provider: 'openai', model: 'llama3', baseUrl: 'http://ollama.internal:11434/v1' },
            ],
          },
        },
      },
    };
    expect(egressWarnings(config(document))).toEqual([]);
  });

  it("never writes a URL's credentials, path or query", () => {
    const [warning] = egressWarnings(config(route('http://user:s3cret@10.0.0.5:8000/v1?key=k3y')));
    expect(warning).toContain('http://10.0.0.5:8000');
    expect(warning).not.toMatch(/s3cret|k3y|user|\/v1/);
  });
});

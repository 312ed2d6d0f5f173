import { request } from 'undici';

/** What the demo reads of one `POST /v1/chat/completions` answer. */
export interface ChatReply {
  status: number;
  /** The answer's text, or the error's message. */
  text: string;
  /** The error's `code` (OpenAI's field), or `ok`. */
  outcome: string;
  servedBy: string;
  attempts: number;
  cache: string;
  costUsd: number;
  elapsedMs: number;
  /** The answer came from a hedge. */
  hedged: boolean;
}

/** What the demo reads of one streamed answer. */
export interface StreamReply {
  status: number;
  servedBy: string;
  attempts: number;
  text: string;
  /** Chunks that carried content. */
  chunks: number;
  firstContentMs: number;
  /** It ended with `data: [DONE]`: the answer is whole. */
  done: boolean;
  elapsedMs: number;
}

interface StreamChunk {
  choices?: Array<{ delta?: { content?: string | null } }>;
}

interface ChatBody {
  choices?: Array<{ message: { content: string | null } }>;
  error?: { code: string; message: string; attempts?: number };
}

/**
 * The demo's client of the LLM route, over plain HTTP. The `openai` SDK would do as well (the
 * route speaks its protocol), but it is only a devDependency and the demo ships in dist, where a
 * production install has none.
 */
export class LlmDemoClient {
  constructor(private readonly base: string) {}

  async chat(model: string, question: string, apiKey?: string): Promise<ChatReply> {
    const startedAt = performance.now();
    const response = await request(`${this.base}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` }),
      },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: question }] }),
    });
    const body = (await response.body.json()) as ChatBody;
    const header = (name: string) => {
      const value = response.headers[name];
      return typeof value === 'string' ? value : '';
    };
    const attempts = header('x-bulkhead-attempts');
    return {
      status: response.statusCode,
      text: body.error ? body.error.message : (body.choices?.[0]?.message.content ?? ''),
      outcome: body.error ? body.error.code : 'ok',
      servedBy: header('x-bulkhead-served-by'),
      // An error answer has no attempts header: the envelope carries them.
      attempts: attempts === '' ? (body.error?.attempts ?? 0) : Number(attempts),
      cache: header('x-bulkhead-cache'),
      costUsd: Number(header('x-bulkhead-cost-usd') || 0),
      elapsedMs: performance.now() - startedAt,
      hedged: header('x-bulkhead-hedged') === 'true',
    };
  }

  /**
   * A streamed request (`stream: true`), read event by event as it arrives: when the first
   * content came, how many chunks carried content, and whether it ended with `[DONE]`.
   */
  async stream(model: string, question: string): Promise<StreamReply> {
    const startedAt = performance.now();
    const response = await request(`${this.base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: question }] }),
    });
    const header = (name: string) => {
      const value = response.headers[name];
      return typeof value === 'string' ? value : '';
    };
    let text = '';
    let chunks = 0;
    let firstContentMs = 0;
    let done = false;
    let pending = '';
    for await (const piece of response.body) {
      pending += (piece as Buffer).toString('utf8');
      let end: number;
      while ((end = pending.indexOf('\n\n')) !== -1) {
        const data = pending.slice(0, end).replace(/^data: /, '');
        pending = pending.slice(end + 2);
        if (data === '[DONE]') {
          done = true;
          continue;
        }
        const content = (JSON.parse(data) as StreamChunk).choices?.[0]?.delta?.content;
        if (!content) continue;
        if (chunks === 0) firstContentMs = performance.now() - startedAt;
        chunks++;
        text += content;
      }
    }
    return {
      status: response.statusCode,
      servedBy: header('x-bulkhead-served-by'),
      attempts: Number(header('x-bulkhead-attempts') || 0),
      text,
      chunks,
      firstContentMs,
      done,
      elapsedMs: performance.now() - startedAt,
    };
  }

  /** `GET /v1/circuits`: each breaker's state and its rolling window's counts, by name. */
  async circuits(): Promise<Record<string, { state: string; failures: number; successes: number }>> {
    const response = await request(`${this.base}/v1/circuits`);
    const body = (await response.body.json()) as {
      circuits: Record<string, { state: string; failures: number; successes: number }>;
    };
    return body.circuits;
  }

  /** `GET /v1/admin/budgets/:tenant`: what the tenant has spent of its cap. */
  async budget(tenant: string, adminToken: string): Promise<{ capUsd: number | null; spentUsd: number }> {
    const response = await request(`${this.base}/v1/admin/budgets/${tenant}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    });
    return (await response.body.json()) as { capUsd: number | null; spentUsd: number };
  }

  /** The outcome label of the attempts at `target` in `GET /metrics` (the first one found). */
  async attemptOutcome(target: string): Promise<string> {
    const text = await (await request(`${this.base}/metrics`)).body.text();
    for (const line of text.split('\n')) {
      if (!line.startsWith('bulkhead_llm_requests_total{') || !line.includes(`target="${target}"`)) continue;
      return /outcome="([^"]+)"/.exec(line)?.[1] ?? '';
    }
    return '';
  }

  /**
   * Calls the route made to one target, from `GET /metrics`: its attempts by outcome, less the
   * times an open breaker passed it over, which never reached the provider.
   */
  async providerCalls(target: string): Promise<number> {
    const text = await (await request(`${this.base}/metrics`)).body.text();
    let calls = 0;
    for (const line of text.split('\n')) {
      if (!line.startsWith('bulkhead_llm_requests_total{')) continue;
      if (!line.includes(`target="${target}"`) || line.includes('outcome="circuit_open"')) continue;
      calls += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return calls;
  }
}

import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request } from 'undici';
import { AppModule } from '../app.module';
import { appOptions, configureApp, createAdapter } from '../bootstrap';
import { bulkheadConfigOf, parseConfig } from '../config';
import { DemoUpstream } from './demo-upstream';

export interface DemoSummary {
  rejected: string;
  notes: string;
  beforeRelease: Record<string, { active: number; waiting: number; concurrency: number; queueCapacity: number }>;
  renderOutcomes: string[];
  renderInvocations: string[];
}

interface Answer {
  status: number;
  outcome: string;
  body: Record<string, unknown>;
}

/** The demo's lanes and tools: seed 000's render (C=1, Q=2) and notes (C=1, Q=1). */
function demoDocument(renderUrl: string): Record<string, unknown> {
  return {
    server: { port: 0, host: '127.0.0.1', shutdownDrainMs: 2000 },
    // Local callers without a key; the renderer stands in on loopback, which egress must allow.
    auth: { allowAnonymous: true },
    containment: { egress: { allowHosts: ['127.0.0.1'], allowPrivateCidrs: ['127.0.0.1/32'] } },
    lanes: {
      render: { concurrency: 1, queueCapacity: 2, queueTtlMs: 30_000 },
      notes: { concurrency: 1, queueCapacity: 1 },
    },
    tools: {
      render_preview: { lane: 'render', kind: 'http', url: renderUrl, timeoutMs: 10_000 },
      read_notes: { lane: 'notes', kind: 'builtin', builtin: 'echo' },
    },
  };
}

/**
 * Tells the story of seed 000 against a real service and a real upstream on loopback: a slow
 * renderer fills its own lane, the overflow is refused at once, notes are served meanwhile, a
 * waiting call expires at its deadline, and the rest finish. `print` gets readable lines.
 */
export async function runSeed000Demo(print: (line: string) => void): Promise<DemoSummary> {
  const upstream = new DemoUpstream();
  const document = demoDocument(await upstream.start());
  const parsed = parseConfig(document, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const config = parsed.config;
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config: bulkheadConfigOf(document, {}) }),
    createAdapter(config),
    appOptions(['error']), // the story is printed; the log's call and breaker lines would interleave with it
  );
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const base = await app.getUrl();
  const startedAt = performance.now();
  const say = (line: string) => print(`+${((performance.now() - startedAt) / 1000).toFixed(2)}s  ${line}`);

  const call = async (toolId: string, callId: string, args: object, headers: Record<string, string> = {}) => {
    const response = await request(`${base}/v1/tools/${toolId}/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-call-id': callId, ...headers },
      body: JSON.stringify({ arguments: args }),
    });
    const body = (await response.body.json()) as Record<string, unknown>;
    const error = body.error as { kind: string; message: string } | undefined;
    const answer: Answer = { status: response.statusCode, outcome: error ? error.kind : 'ok', body };
    say(
      `${callId}: ${answer.status} ${error ? `${error.kind} (${error.message})` : `ok in lane ${String(body.lane)}`}`,
    );
    return answer;
  };
  const lanes = async () =>
    ((await (await request(`${base}/v1/lanes`)).body.json()) as { lanes: DemoSummary['beforeRelease'] }).lanes;
  // Each step waits until the previous call is where the story needs it: HTTP requests sent
  // one after the other may still arrive in either order.
  const until = async (active: number, waiting: number) => {
    for (;;) {
      const { render } = await lanes();
      if (render.active === active && render.waiting === waiting) return;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  try {
    say('render-1 asks the renderer for a 2 s preview; it takes the only render slot');
    const first = call('render_preview', 'render-1', { ms: 2000 });
    await until(1, 0);
    say('render-2 waits, but only for 1 s (X-Queue-Ttl-Ms: 1000); render-3 waits too');
    const second = call('render_preview', 'render-2', { ms: 500 }, { 'x-queue-ttl-ms': '1000' });
    await until(1, 1);
    const third = call('render_preview', 'render-3', { ms: 500 });
    await until(1, 2);
    say('render-4 arrives: the render lane is full (1 running, 2 waiting)');
    const fourth = await call('render_preview', 'render-4', { ms: 500 });
    say('meanwhile notes-1 goes to its own lane');
    const notes = await call('read_notes', 'notes-1', { q: 'today' });
    const beforeRelease = await lanes();
    say(`lanes now: render ${JSON.stringify(beforeRelease.render)}, notes ${JSON.stringify(beforeRelease.notes)}`);
    const outcomes = await Promise.all([first, second, third]);
    say('every accepted call has its answer; the renderer only ever saw render-1 and render-3');
    return {
      rejected: fourth.outcome,
      notes: notes.outcome,
      beforeRelease,
      renderOutcomes: outcomes.map((answer) => answer.outcome),
      renderInvocations: [...upstream.callIds],
    };
  } finally {
    await app.close();
    await upstream.close();
  }
}

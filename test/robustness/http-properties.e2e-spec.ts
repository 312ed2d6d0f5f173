import type { ServerResponse } from 'node:http';
import { setTimeout as wait } from 'node:timers/promises';
import fc from 'fast-check';
import { Agent } from 'undici';
import { createTestApp, type TestApp } from '../support/create-app';
import { type ContractKind, expectEnvelope } from '../support/envelope';
import { eventually } from '../support/eventually';
import { type Response, send } from '../support/http-client';
import { parsePromText, sampleValue } from '../support/prom-text';
import { getEvents, getLanes } from '../support/service-reads';
import { ADMIN_TOKEN, AS_ADMIN, testTenant } from '../support/tenants';
import { Upstream, type UpstreamRequest } from '../support/upstream';

const ACME = testTenant('acme');
const LIMITED = testTenant('limited');
const TENANTS = { acme: ACME.headers, limited: LIMITED.headers, anonymous: {} } as const;
type Caller = keyof typeof TENANTS;

const CAP_USD = 0.5;
/** A request that has not answered by then, everything released, is a hang of the service. */
const CLIENT_TIMEOUT_MS = 15_000;

/** The HTTP status of each kind, copied from docs/http-contract.md section 6; `internal` is never expected. */
const STATUS_OF: Partial<Record<ContractKind, number[]>> = {
  invalid_request: [400, 413],
  schema: [400],
  unauthorized: [401],
  budget_exceeded: [402],
  contained: [403],
  egress_denied: [403],
  not_found: [404],
  idempotency_conflict: [422],
  rate_limited: [429],
  queue_full: [503],
  queue_expired: [503],
  circuit_open: [503],
  stopped: [503],
  unavailable: [503],
  overloaded: [503],
  timeout: [504],
  transient: [502],
};

/** Outcomes a keyed call stores once it ran: replayed to every later call with the key and arguments. */
const STORED_KINDS = new Set(['timeout', 'transient']);

/**
 * Two tiny lanes; echo and delay share `narrow`, the http tool `fetch` (retried once on 503,
 * charged per attempt) runs in `wide`. acme has a small budget, limited an rpm limit.
 */
function config(upstreamUrl: string): Record<string, unknown> {
  return {
    auth: { adminToken: ADMIN_TOKEN, apiKeys: [ACME.apiKey, LIMITED.apiKey] },
    lanes: {
      narrow: { concurrency: 1, queueCapacity: 1, queueTtlMs: 2_000 },
      wide: { concurrency: 2, queueCapacity: 1, queueTtlMs: 2_000 },
    },
    tools: {
      echo: { lane: 'narrow', kind: 'builtin', builtin: 'echo', costUsd: 0.02 },
      delay: { lane: 'narrow', kind: 'builtin', builtin: 'delay', timeoutMs: 1_000 },
      fetch: {
        lane: 'wide',
        kind: 'http',
        url: upstreamUrl,
        timeoutMs: 5_000,
        costUsd: 0.1,
        retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 5 },
        breaker: { volumeThreshold: 4, resetTimeoutMs: 200 },
      },
    },
    rateLimits: { tenants: { limited: { rpm: 4 } } },
    budgets: { tenants: { acme: CAP_USD } },
    containment: { pools: { normalMaxConcurrency: 2, isolatedMaxConcurrency: 1 } },
  };
}

/** Request bodies, odd JSON included; the http tool's upstream answers by `mode`. */
const BODIES = [
  '{"arguments":{}}',
  '{}',
  '',
  '{"arguments":{"q":"x","n":[1,2]}}',
  '{"arguments":{"ms":0}}',
  '{"arguments":{"ms":15}}',
  '{"arguments":{"ms":-1}}',
  '{"arguments":{"ms":1.5}}',
  '{"arguments":{"ms":"5"}}',
  '{"arguments":{"mode":"ok"}}',
  '{"arguments":{"mode":"fail"}}',
  '{"arguments":{"mode":"hang"}}',
  '{"arguments":{"mode":"ok","mode":"hang"}}',
  '{"arguments":{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}}',
  '{"arguments":{"\\u00fc\\u0000":"\\ud83d\\ude00","e":"\\ud800","big":1e308,"tiny":-0,"z":1.5e-7}}',
  `{"arguments":${'{"a":'.repeat(20)}null${'}'.repeat(20)}}`,
  `{"arguments":${'['.repeat(70)}${']'.repeat(70)}}`,
  '{"arguments":[1,2]}',
  '{"arguments":null}',
  '{"arguments":"text"}',
  '{"arguments":{},"extra":1}',
  '{"arguments":{',
  'null',
  '{"arguments":{"ms":200}}',
];

type Operation =
  | { op: 'invoke'; caller: Caller; tool: string; body: number; key: string | null }
  | { op: 'abort'; pick: number }
  | { op: 'contain'; tenant: 'acme' | 'limited'; state: string; posture: string }
  | { op: 'release' }
  | { op: 'pause'; pick: number };

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('invoke' as const),
      caller: fc.constantFrom<Caller>('acme', 'limited', 'anonymous'),
      tool: fc.constantFrom('echo', 'delay', 'delay', 'fetch', 'fetch', 'fetch', 'nope'),
      // Mostly bodies a tool takes, so calls reach the lanes, keys and upstream; odd ones too.
      body: fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(0, 3, 4, 5, 9, 10, 11, 11, 12, 13, 14, 15, 23, 23) },
        { weight: 1, arbitrary: fc.nat({ max: BODIES.length - 1 }) },
      ),
      key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { nil: null }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('abort' as const), pick: fc.nat(50) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('contain' as const),
      tenant: fc.constantFrom<'acme' | 'limited'>('acme', 'limited'),
      state: fc.constantFrom('not_contained', 'active', 'released', 'indeterminate'),
      posture: fc.constantFrom('hard', 'degraded'),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('release' as const) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('pause' as const), pick: fc.nat(50) }) },
);

/** The upstream of `fetch`: answers by the arguments' `mode`; `hang` holds until released. */
class Behaviour {
  private held: Array<() => void> = [];
  private open = false;
  private served = 0;

  readonly handler = async (request: UpstreamRequest, response: ServerResponse): Promise<void> => {
    let mode: unknown;
    try {
      mode = (JSON.parse(request.body || '{}') as { mode?: unknown }).mode;
    } catch {
      mode = undefined;
    }
    if (mode === 'fail') {
      response.writeHead(503).end();
      return;
    }
    if (mode === 'hang' && !this.open) await new Promise<void>((resolve) => this.held.push(resolve));
    // A distinct answer per request: a replay that ran the tool again would show.
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ n: ++this.served }));
  };

  release(): void {
    for (const resolve of this.held.splice(0)) resolve();
  }

  releaseForever(): void {
    this.open = true;
    this.release();
  }
}

interface Sent {
  callId: string;
  caller: Caller;
  tool: string;
  body: string;
  key: string | null;
  controller: AbortController;
  abortedByClient: boolean;
  outcome?: { answer?: Response; error?: unknown; order: number };
  done: Promise<void>;
}

/** One run: a fresh upstream and app, the operations in order, then the invariants. */
async function run(operations: Operation[], runId: number): Promise<void> {
  const behaviour = new Behaviour();
  const upstream = await Upstream.start(behaviour.handler);
  let service: TestApp | undefined;
  const sent: Sent[] = [];
  let answered = 0;
  try {
    service = await createTestApp(config(upstream.url('/fetch')));
    const base = service.url;

    const invokeOnce = (caller: Caller, tool: string, body: string, key: string | null): Sent => {
      const callId = `r${runId}-${sent.length}`;
      const controller = new AbortController();
      const agent = new Agent();
      const timer = setTimeout(() => controller.abort(new Error('client timeout')), CLIENT_TIMEOUT_MS);
      const headers: Record<string, string> = { ...TENANTS[caller], 'x-call-id': callId };
      if (key !== null) headers['idempotency-key'] = key;
      if (body !== '') headers['content-type'] = 'application/json';
      const entry: Sent = {
        callId,
        caller,
        tool,
        body,
        key,
        controller,
        abortedByClient: false,
        done: Promise.resolve(),
      };
      entry.done = send('POST', `${base}/v1/tools/${tool}/invoke`, {
        raw: body === '' ? undefined : body,
        headers,
        signal: controller.signal,
        dispatcher: agent,
      })
        .then(
          (answer) => {
            entry.outcome = { answer, order: answered++ };
          },
          (error: unknown) => {
            entry.outcome = { error, order: answered++ };
          },
        )
        .finally(async () => {
          clearTimeout(timer);
          await agent.destroy();
        });
      sent.push(entry);
      return entry;
    };

    const pending = () => sent.filter((entry) => !entry.outcome);

    for (const step of operations) {
      if (step.op === 'invoke') {
        invokeOnce(step.caller, step.tool, BODIES[step.body], step.key);
      } else if (step.op === 'abort') {
        const open = pending();
        if (open.length > 0) {
          const target = open[step.pick % open.length];
          target.abortedByClient = true;
          target.controller.abort();
        }
      } else if (step.op === 'contain') {
        const response = await send('PUT', `${base}/v1/admin/containment/${step.tenant}`, {
          json: { state: step.state, posture: step.posture, reason: 'property test' },
          headers: AS_ADMIN,
        });
        expect(response.status).toBe(200);
      } else if (step.op === 'release') {
        behaviour.release();
      } else {
        const open = pending();
        const wanted = open.length > 0 ? open[step.pick % open.length].done : Promise.resolve();
        await Promise.race([wanted, wait(100)]);
      }
    }

    // Quiet: nothing held any more, every request settled.
    behaviour.releaseForever();
    await Promise.all(sent.map((entry) => entry.done));

    // Each request: exactly one answer, or an abort its own client made.
    for (const entry of sent) {
      const { answer, error } = entry.outcome!;
      if (!answer) {
        if (!entry.abortedByClient) throw new Error(`${entry.callId} got no answer: ${String(error)}`);
        continue;
      }
      checkAnswer(entry, answer);
    }

    // A key's first stored outcome is what every later call with it and the same arguments gets.
    const firsts = new Map<string, Sent>();
    const byOrder = sent.filter((entry) => entry.outcome?.answer).sort((a, b) => a.outcome!.order - b.outcome!.order);
    for (const entry of byOrder) {
      if (entry.key === null || !isStored(entry.outcome!.answer!)) continue;
      const scope = JSON.stringify([entry.caller, entry.tool, entry.key, entry.body]);
      const first = firsts.get(scope);
      if (!first) firsts.set(scope, entry);
      else expectSameOutcome(first, entry);
    }
    // And once more, now that everything ended, with no tenant contained any more (a hard
    // posture refuses even the ledger reads below).
    for (const tenant of ['acme', 'limited']) {
      const response = await send('PUT', `${base}/v1/admin/containment/${tenant}`, {
        json: { state: 'released' },
        headers: AS_ADMIN,
      });
      expect(response.status).toBe(200);
    }
    for (const first of firsts.values()) {
      const again = invokeOnce(first.caller, first.tool, first.body, first.key);
      await again.done;
      const answer = again.outcome!.answer!;
      checkAnswer(again, answer);
      if (isStored(answer)) expectSameOutcome(first, again);
    }

    await eventually(async () => {
      const lanes = await getLanes(base);
      for (const [name, lane] of Object.entries(lanes)) {
        expect({ name, active: lane.active, waiting: lane.waiting }).toEqual({ name, active: 0, waiting: 0 });
      }
      const prom = parsePromText((await send('GET', `${base}/metrics`)).body as string);
      for (const pool of ['normal', 'isolated']) {
        expect({ pool, active: sampleValue(prom, 'bulkhead_http_pool_active', { pool }) }).toEqual({ pool, active: 0 });
      }
      const budget = await send('GET', `${base}/v1/admin/budgets/acme`, { headers: AS_ADMIN });
      expect(budget.status).toBe(200);
      expect(budget.body.capUsd).toBe(CAP_USD);
      expect(budget.body.reservedUsd).toBe(0);
      expect(budget.body.spentUsd).toBeGreaterThanOrEqual(0);
      expect(budget.body.spentUsd).toBeLessThanOrEqual(CAP_USD + 1e-9);
    });

    // No call answered twice: every call id appears at most once in its tenant's ledger (admin
    // and breaker lines carry no call id).
    for (const caller of Object.keys(TENANTS) as Caller[]) {
      const events = await getEvents(base, 1000, TENANTS[caller]);
      const ids = events.map((event) => event.callId).filter((id) => id !== '');
      const repeated = ids.filter((id, index) => ids.indexOf(id) !== index);
      expect({ caller, repeated }).toEqual({ caller, repeated: [] });
    }
  } finally {
    behaviour.releaseForever();
    for (const entry of sent) entry.controller.abort();
    await Promise.all(sent.map((entry) => entry.done));
    await service?.close();
    await upstream.close();
  }
}

/** A success body, or the envelope of a known kind with its status; never `internal`. */
function checkAnswer(entry: Sent, answer: Response): void {
  // Refusals before the call id is read (hard containment) carry none; any other is ours.
  expect([undefined, entry.callId]).toContain(answer.headers['x-call-id']);
  if (answer.status === 200) {
    expect(answer.headers['x-call-id']).toBe(entry.callId);
    expect(Object.keys(answer.body).sort()).toEqual(
      ['attempts', 'callId', 'durationMs', 'lane', 'pool', 'replayed', 'result', 'toolId'].sort(),
    );
    expect(answer.body).toMatchObject({
      callId: entry.callId,
      toolId: entry.tool,
      lane: entry.tool === 'fetch' ? 'wide' : 'narrow',
      pool: expect.stringMatching(/^(normal|isolated)$/),
      attempts: expect.any(Number),
      durationMs: expect.any(Number),
      replayed: expect.any(Boolean),
    });
    expect(answer.body.attempts).toBeGreaterThanOrEqual(answer.body.replayed ? 0 : 1);
    return;
  }
  const kind = answer.body?.error?.kind as ContractKind;
  const statuses = STATUS_OF[kind];
  expect({ callId: entry.callId, kind, known: statuses !== undefined }).toEqual({
    callId: entry.callId,
    kind,
    known: true,
  });
  expect(statuses).toContain(answer.status);
  expectEnvelope(answer, answer.status, kind);
  expect([undefined, entry.callId]).toContain(answer.body.callId);
}

function isStored(answer: Response): boolean {
  return answer.status === 200 || STORED_KINDS.has(answer.body?.error?.kind);
}

function expectSameOutcome(first: Sent, later: Sent): void {
  const a = first.outcome!.answer!;
  const b = later.outcome!.answer!;
  const outcome = (answer: Response) =>
    answer.status === 200 ? { result: answer.body.result } : { kind: answer.body.error.kind };
  expect({ key: later.key, callId: later.callId, ...outcome(b) }).toEqual({
    key: first.key,
    callId: later.callId,
    ...outcome(a),
  });
}

describe('robustness: random operation sequences over HTTP', () => {
  it('answers every call once, by the contract, and ends quiet with the budget kept', async () => {
    let runId = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25, size: 'max' }), (operations) =>
        run(operations, runId++),
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});

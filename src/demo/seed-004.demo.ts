import { hash } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from '../app.module';
import { appOptions, configureApp, createAdapter } from '../bootstrap';
import { bulkheadConfigOf, parseConfig } from '../config';
import { type ChatReply, LlmDemoClient } from './llm-demo-client';

/** One answer as the summary keeps it. */
export interface ServedSummary {
  status: number;
  outcome: string;
  servedBy: string;
  attempts: number;
  cache: string;
}

export interface Seed004Summary {
  /** `waitedRetryAfter`: the request took at least the Retry-After, so the retry waited for it. */
  retry: ServedSummary & { answer: string; waitedRetryAfter: boolean };
  cacheHit: ServedSummary & { costUsd: number; sameAnswer: boolean; providerCalls: number };
  breaker: {
    /** The requests that failed at the primary and were served by the secondary, until it opened. */
    whileFailing: ServedSummary[];
    circuits: Record<string, string>;
    afterOpen: ServedSummary;
    primaryCallsAfterOpen: number;
  };
  failover: ServedSummary & { quotaCalls: number };
  budget: {
    capUsd: number;
    answered: Array<ServedSummary & { costUsd: number }>;
    refused: ServedSummary;
    providerCalls: number;
    spentUsd: number;
  };
  streamed: {
    status: number;
    servedBy: string;
    attempts: number;
    contentChunks: number;
    whole: boolean;
    /** The first content came only after the flaky target's failure was behind it. */
    text: string;
  };
  hedged: ServedSummary & { hedged: boolean; answer: string; fasterThanSlowTarget: boolean; slowOutcome: string };
}

const PRIMARY = 'fake/primary-1';
const SECONDARY = 'fake/secondary-1';
const QUOTA = 'fake/quota-1';
const METER = 'fake/meter-1';
/** The small tenant's key: only its SHA-256 goes in the config, as with any key. */
const TINY_KEY = 'demo-key-of-tenant-tiny';
const ADMIN_TOKEN = 'demo-admin-token-0123456789';
const TINY_CAP_USD = 0.01;
const RETRY_AFTER_MS = 40;
/** The metered route's output cap and price: its worst case is at least their product. */
const METER_CAP_TOKENS = 1000;
const METER_OUTPUT_PER_MTOK_USD = 4;
/** The hedged route's slow target takes this long; the hedge starts after HEDGE_AFTER_MS. */
const SLOW_MS = 2_000;
const HEDGE_AFTER_MS = 50;
const STREAMED_TEXT = 'Streams commit at their first content: until then a failure is retried unseen.';

/**
 * Three routes of fake targets, so each part of the story has its own providers and breakers:
 * `chat` (a primary that fails once, answers once, then fails for good; a secondary that always
 * answers), `quota` (a target whose quota is spent, then a backup), `metered` (one priced target
 * whose answers use 900 of their 1000 output tokens). Every wait is tens of milliseconds, so the
 * story takes well under a second of real time.
 */
function demoDocument(): Record<string, unknown> {
  return {
    server: { port: 0, host: '127.0.0.1', shutdownDrainMs: 2000 },
    // Callers without a key are `anonymous`, without a budget; tenant tiny has a key and a cap.
    auth: {
      allowAnonymous: true,
      adminToken: ADMIN_TOKEN,
      apiKeys: [{ sha256: hash('sha256', TINY_KEY, 'hex'), tenant: 'tiny' }],
    },
    lanes: { llm: { concurrency: 4, queueCapacity: 8 } },
    budgets: { tenants: { tiny: TINY_CAP_USD } },
    llm: {
      routes: {
        chat: {
          lane: 'llm',
          targets: [
            {
              provider: 'fake',
              model: 'primary-1',
              script: [
                { status: 503, retryAfterMs: RETRY_AFTER_MS },
                { text: 'A bulkhead keeps one failing part from sinking the whole ship.', delayMs: 5 },
                { status: 503 },
              ],
            },
            { provider: 'fake', model: 'secondary-1', script: [{ text: 'The secondary answers.', delayMs: 5 }] },
          ],
          retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 40 },
          // Four attempts in the window, more than half failed: open, and stay open for the story.
          breaker: { volumeThreshold: 4, errorThresholdPercentage: 50, resetTimeoutMs: 60_000 },
        },
        quota: {
          lane: 'llm',
          targets: [
            { provider: 'fake', model: 'quota-1', script: [{ status: 429, code: 'insufficient_quota' }] },
            { provider: 'fake', model: 'backup-1', script: [{ text: 'The backup answers.' }] },
          ],
          retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 },
        },
        metered: {
          lane: 'llm',
          targets: [
            {
              provider: 'fake',
              model: 'meter-1',
              script: [{ text: 'A long, expensive answer.', usage: { promptTokens: 20, completionTokens: 900 } }],
            },
          ],
          maxOutputTokens: METER_CAP_TOKENS,
        },
        streamed: {
          lane: 'llm',
          targets: [
            { provider: 'fake', model: 'flaky-stream-1', script: [{ status: 503 }] },
            { provider: 'fake', model: 'stream-1', script: [{ text: STREAMED_TEXT, chunkDelayMs: 15 }] },
          ],
          retry: { maxAttempts: 1 },
          cache: false,
        },
        hedged: {
          lane: 'llm',
          targets: [
            { provider: 'fake', model: 'slow-1', script: [{ text: 'The slow answer.', delayMs: SLOW_MS }] },
            { provider: 'fake', model: 'fast-1', script: [{ text: 'The hedge answers first.', delayMs: 10 }] },
          ],
          hedgeAfterMs: HEDGE_AFTER_MS,
          cache: false,
        },
      },
      // With a budget configured, every target must have a price for its worst case to be held.
      prices: {
        [PRIMARY]: { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        [SECONDARY]: { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        [QUOTA]: { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        'fake/backup-1': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        [METER]: { inputPerMTokUsd: 1, outputPerMTokUsd: METER_OUTPUT_PER_MTOK_USD },
        'fake/flaky-stream-1': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        'fake/stream-1': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        'fake/slow-1': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
        'fake/fast-1': { inputPerMTokUsd: 0.5, outputPerMTokUsd: 1.5 },
      },
    },
  };
}

function served(reply: ChatReply): ServedSummary {
  return {
    status: reply.status,
    outcome: reply.outcome,
    servedBy: reply.servedBy,
    attempts: reply.attempts,
    cache: reply.cache,
  };
}

function describe(reply: ChatReply): string {
  if (reply.status !== 200)
    return `${reply.status} ${reply.outcome} after ${reply.attempts} attempt(s) (${reply.text})`;
  return (
    `${reply.status}, served by ${reply.servedBy} in ${reply.attempts} attempt(s), cache ${reply.cache}, ` +
    `$${reply.costUsd.toFixed(6)}, ${Math.round(reply.elapsedMs)} ms`
  );
}

/**
 * Tells the story of seed 004, the LLM gateway, against a real service on loopback with fake
 * providers: retries with backoff, a cache hit, a breaker opening, failover, a budget refusal, a
 * stream that fails over before its first byte, and a hedge.
 * `print` gets readable lines.
 */
export async function runSeed004Demo(print: (line: string) => void): Promise<Seed004Summary> {
  const document = demoDocument();
  const parsed = parseConfig(document, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config: bulkheadConfigOf(document, {}) }),
    createAdapter(parsed.config),
    appOptions(['error']), // the story is printed; the log's call and breaker lines would interleave with it
  );
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const client = new LlmDemoClient(await app.getUrl());
  const startedAt = performance.now();
  const say = (line: string) => print(`+${((performance.now() - startedAt) / 1000).toFixed(2)}s  ${line}`);

  try {
    say(`1. retries: ${PRIMARY} answers 503 with Retry-After: ${RETRY_AFTER_MS} ms, then the answer`);
    const question = 'What is a bulkhead?';
    const first = await client.chat('chat', question);
    say(`   "${question}" -> ${describe(first)}`);
    say(`   answer: "${first.text}"`);

    say('2. the cache: the same question again');
    const callsBefore = await client.providerCalls(PRIMARY);
    const again = await client.chat('chat', question);
    const hitCalls = (await client.providerCalls(PRIMARY)) - callsBefore;
    say(`   "${question}" -> ${describe(again)}`);
    say(`   same answer: ${again.text === first.text}; calls to ${PRIMARY} meanwhile: ${hitCalls}`);

    say(`3. the breaker: ${PRIMARY} now answers 503 to every attempt`);
    const whileFailing: ChatReply[] = [];
    let circuits = await client.circuits();
    // Bounded: the breaker settings open it on the first failing request; a loop that never ends
    // would hide it if it did not.
    while (circuits['llm.chat.0'].state !== 'open' && whileFailing.length < 5) {
      const reply = await client.chat('chat', `Failing question ${whileFailing.length + 1}?`);
      whileFailing.push(reply);
      say(`   failing question ${whileFailing.length} -> ${describe(reply)}`);
      circuits = await client.circuits();
    }
    const primary = circuits['llm.chat.0'];
    say(
      `   GET /v1/circuits: llm.chat.0 (${PRIMARY}) ${primary.state}, ${primary.failures} failures and ` +
        `${primary.successes} success in its window; llm.chat.1 (${SECONDARY}) ${circuits['llm.chat.1'].state}`,
    );
    const primaryBefore = await client.providerCalls(PRIMARY);
    const afterOpen = await client.chat('chat', 'Is anyone there?');
    const primaryCallsAfterOpen = (await client.providerCalls(PRIMARY)) - primaryBefore;
    say(`   with the breaker open -> ${describe(afterOpen)}; calls to ${PRIMARY}: ${primaryCallsAfterOpen}`);

    say(`4. failover: ${QUOTA} answers 429 insufficient_quota, which waiting does not fix`);
    const failover = await client.chat('quota', 'Who pays for this?');
    const quotaCalls = await client.providerCalls(QUOTA);
    say(`   -> ${describe(failover)}; calls to ${QUOTA}: ${quotaCalls} (not retried)`);

    const worstOutputUsd = (METER_CAP_TOKENS * METER_OUTPUT_PER_MTOK_USD) / 1e6;
    say(
      `5. the budget: tenant tiny has $${TINY_CAP_USD}; each ${METER} request holds its worst case first, ` +
        `over $${worstOutputUsd} (${METER_CAP_TOKENS} output tokens at $${METER_OUTPUT_PER_MTOK_USD}/M, plus its input)`,
    );
    const answered: ChatReply[] = [];
    let refused: ChatReply | undefined;
    let callsBeforeRefusal = 0;
    for (let n = 1; n <= 5 && !refused; n++) {
      callsBeforeRefusal = await client.providerCalls(METER);
      const reply = await client.chat('metered', `Expensive question ${n}?`, TINY_KEY);
      const { spentUsd } = await client.budget('tiny', ADMIN_TOKEN);
      say(`   expensive question ${n} -> ${describe(reply)}; spent $${spentUsd.toFixed(6)} of $${TINY_CAP_USD}`);
      if (reply.status === 200) answered.push(reply);
      else refused = reply;
    }
    if (!refused) throw new Error('the budget never refused a request');
    const providerCalls = (await client.providerCalls(METER)) - callsBeforeRefusal;
    const { spentUsd } = await client.budget('tiny', ADMIN_TOKEN);
    say(
      `   $${(TINY_CAP_USD - spentUsd).toFixed(6)} left, less than the worst case: refused before any provider ` +
        `call (calls to ${METER} for it: ${providerCalls})`,
    );

    say('6. streaming: fake/flaky-stream-1 answers 503 before its first byte; fake/stream-1 streams the answer');
    const stream = await client.stream('streamed', 'How do streams fail over?');
    say(
      `   -> ${stream.status}, served by ${stream.servedBy} in ${stream.attempts} attempt(s), ` +
        `${stream.chunks} content chunks, first at ${Math.round(stream.firstContentMs)} ms, ` +
        `${stream.done ? 'ended with [DONE]' : 'cut short'}; the client never saw the 503`,
    );

    say(
      `7. hedging: fake/slow-1 takes ${SLOW_MS} ms; after ${HEDGE_AFTER_MS} ms without an answer fake/fast-1 starts too`,
    );
    const hedged = await client.chat('hedged', 'Who answers first?');
    const slowOutcome = await client.attemptOutcome('fake/slow-1');
    say(`   -> ${describe(hedged)}, hedged: ${hedged.hedged}; fake/slow-1's attempt: ${slowOutcome}`);

    return {
      streamed: {
        status: stream.status,
        servedBy: stream.servedBy,
        attempts: stream.attempts,
        contentChunks: stream.chunks,
        whole: stream.done,
        text: stream.text,
      },
      hedged: {
        ...served(hedged),
        hedged: hedged.hedged,
        answer: hedged.text,
        fasterThanSlowTarget: hedged.elapsedMs < SLOW_MS,
        slowOutcome,
      },
      retry: { ...served(first), answer: first.text, waitedRetryAfter: first.elapsedMs >= RETRY_AFTER_MS },
      cacheHit: {
        ...served(again),
        costUsd: again.costUsd,
        sameAnswer: again.text === first.text,
        providerCalls: hitCalls,
      },
      breaker: {
        whileFailing: whileFailing.map(served),
        circuits: Object.fromEntries(Object.entries(circuits).map(([name, { state }]) => [name, state])),
        afterOpen: served(afterOpen),
        primaryCallsAfterOpen,
      },
      failover: { ...served(failover), quotaCalls },
      budget: {
        capUsd: TINY_CAP_USD,
        answered: answered.map((reply) => ({ ...served(reply), costUsd: reply.costUsd })),
        refused: served(refused),
        providerCalls,
        spentUsd,
      },
    };
  } finally {
    await app.close();
  }
}

/**
 * Redis topologies (issue 26): what a decision costs on a Redis Cluster against one Redis, how
 * evenly tenants spread over a cluster's shards, how long a failover leaves decisions refused,
 * and what a classic PUBLISH costs a cluster against a sharded one.
 *
 *   npm run bench -- redis-topologies [options]
 *
 * Options:
 *   --tenants N   tenants the decisions go round (default 10,000)
 *   --duration S  seconds per measured run (default 3)
 *   --quick       1,000 tenants, 0.5 s runs, one failover: does it still run? (nothing written)
 *
 * Everything is started here from the `redis-server` on PATH, on free loopback ports (the same
 * fixtures as the tests: test/support/redis-topologies.ts), and stopped at the end.
 *
 * (a) Decisions: the joint admission script (rate limit and budget, one EVALSHA) then the
 *   budget's settle, the two commands of a paid tool call, for tenant n mod N, 64 in flight,
 *   from this process (ioredis, the service's own connection settings) on one Redis and on a
 *   cluster of 3 primaries. Figures: decisions/s, and Redis CPU per decision (`INFO cpu` of
 *   every node, before and after, over the decisions made).
 * (b) Spread: which primary serves each tenant's slot (`CLUSTER KEYSLOT` of its hash tag,
 *   `CLUSTER SLOTS`), as the share of the N tenants per primary.
 * (c) Failover: one decision every 5 ms while the primary is SIGKILLed (Sentinel: a primary, a
 *   replica, 3 Sentinels, down after 1 s; Cluster: 3 primaries with a replica each, node
 *   timeout 1 s, the primary of the tenant's slot killed). Figures: the window from the kill to
 *   the first decision answered again, and the decisions refused in it.
 * (d) Pub/sub on the cluster: 20,000 messages published with PUBLISH (what containment uses:
 *   every node hears it) and with SPUBLISH (only the channel's shard), one subscriber on a node;
 *   Redis CPU per message summed over the nodes, and messages/s.
 *
 * Prints tables and writes bench/results/redis-topologies.json. Exits 1 if a decision failed
 * outside a failover window, a failover never recovered, or a subscriber missed a message.
 * About 60 s; bounded at 180 s.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as wait } from 'node:timers/promises';
import Redis from 'ioredis';
import { budgetPeriod } from '../src/budget/budget-period';
import { RedisBudgetStore } from '../src/budget/redis-budget.store';
import { RedisCallAdmission } from '../src/dispatch/admission/redis-call-admission';
import { RedisRateLimitStore } from '../src/rate-limit/redis-rate-limit.store';
import { createRedisConnection, readyWithin, type RedisClient, type RedisConnectionOptions } from '../src/store';
import { RedisKeys, RedisTime } from '../src/store/redis-keys';
import { silentLogger } from '../test/support/redis';
import { PrivateRedis } from '../test/support/private-redis';
import { PrivateRedisCluster, PrivateSentinelGroup, redisCli } from '../test/support/redis-topologies';
import { option } from './support/options';
import { runMain } from './support/processes';
import { fixed, printTable, writeResultsUnlessQuick } from './support/report';

const QUICK = process.argv.includes('--quick');
const TENANTS = QUICK ? 1_000 : option('tenants', 10_000, 1);
const DURATION_MS = (QUICK ? 0.5 : option('duration', 3, 1)) * 1_000;
const IN_FLIGHT = 64;
const MESSAGES = QUICK ? 2_000 : 20_000;
const FAILOVER_WITHIN_MS = 30_000;

const problems: string[] = [];
/** A limit and a budget no decision here reaches: every one is admitted, as a call would be. */
const RULE = { name: 'rpm', perMinute: 1_000_000_000 };
const DAY = budgetPeriod('day', Date.now());
const PERIOD = DAY.key;

/** Total CPU seconds (user + sys) the redis-server at `port` has used. */
async function cpuSeconds(port: number): Promise<number> {
  const stdout = await redisCli(port, 'info', 'cpu');
  const read = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(stdout)?.[1] ?? 0);
  return read('used_cpu_sys') + read('used_cpu_user');
}

const totalCpu = async (ports: number[]) => (await Promise.all(ports.map(cpuSeconds))).reduce((a, b) => a + b, 0);

async function connect(options: Omit<RedisConnectionOptions, 'commandTimeoutMs'>): Promise<RedisClient> {
  const redis = createRedisConnection({ ...options, commandTimeoutMs: 1_000, logger: silentLogger });
  await readyWithin(redis, 10_000);
  if (redis.status !== 'ready') throw new Error(`no connection: ${redis.status}`);
  return redis;
}

/** One paid call's decisions: admit (rate limit and budget, one script), then settle. */
function decider(redis: RedisClient) {
  const keys = new RedisKeys('bh-bench:');
  const time = new RedisTime();
  const rates = new RedisRateLimitStore(redis, keys, time);
  const budgets = new RedisBudgetStore(redis, keys, time);
  const admission = new RedisCallAdmission(redis, rates, budgets);
  let reservation = 0;
  return async (tenant: string): Promise<void> => {
    const id = `r${++reservation}`;
    const decision = await admission.admit([RULE], [1], {
      reservation: { tenant, period: PERIOD, id, amountMicros: 1 },
      capMicros: 1_000_000_000_000,
      ttlMs: 60_000,
      budgetPeriod: DAY,
      retryAfterMaxMs: undefined,
    });
    if (!decision.rate.allowed || !decision.budget) throw new Error('refused');
    await budgets.settle(tenant, PERIOD, id, 1);
  };
}

async function decisions(name: string, redis: RedisClient, ports: number[]) {
  const decide = decider(redis);
  let made = 0;
  let failed = 0;
  let next = 0;
  const cpuBefore = await totalCpu(ports);
  const started = performance.now();
  const deadline = started + DURATION_MS;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (performance.now() < deadline) {
        try {
          await decide(`tenant-${next++ % TENANTS}`);
          made++;
        } catch {
          failed++;
        }
      }
    }),
  );
  const seconds = (performance.now() - started) / 1_000;
  const cpu = (await totalCpu(ports)) - cpuBefore;
  if (failed > 0) problems.push(`${name}: ${failed} decisions failed`);
  return { topology: name, 'decisions/s': Math.round(made / seconds), 'Redis CPU µs/decision': (cpu * 1e6) / made };
}

/** Which primary serves each tenant's slot: the slot of its hash tag, and the slot ranges of the primaries. */
async function spread(redis: RedisClient) {
  const ranges = (await redis.call('CLUSTER', 'SLOTS')) as Array<[number, number, [string, number]]>;
  const keyslots = redis.pipeline();
  for (let n = 0; n < TENANTS; n++) keyslots.call('CLUSTER', 'KEYSLOT', `{tenant-${n}}`);
  const slots = ((await keyslots.exec()) ?? []).map(([, slot]) => Number(slot));
  const counts = new Map<number, number>();
  for (const slot of slots) {
    const [, , [, port]] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
    counts.set(port, (counts.get(port) ?? 0) + 1);
  }
  return [...counts.values()].map((count, index) => ({
    primary: index + 1,
    tenants: count,
    share: `${fixed((100 * count) / TENANTS, 1)} %`,
  }));
}

/** One decision every 5 ms across a kill: the window until one is answered again. */
async function failover(name: string, redis: RedisClient, kill: () => Promise<void>) {
  const decide = decider(redis);
  for (let n = 0; n < 20; n++) await decide('tenant-failover');
  const killedAt = performance.now();
  await kill();
  let refused = 0;
  for (;;) {
    try {
      await decide('tenant-failover');
      if (refused > 0 || performance.now() - killedAt > 50) break;
    } catch {
      refused++;
    }
    if (performance.now() - killedAt > FAILOVER_WITHIN_MS) {
      problems.push(`${name}: no decision answered within ${FAILOVER_WITHIN_MS} ms of the kill`);
      break;
    }
    await wait(5);
  }
  return { failover: name, 'window ms': Math.round(performance.now() - killedAt), 'decisions refused': refused };
}

/** MESSAGES published one way, heard by one subscriber on one node: Redis CPU per message, and rate. */
async function publishing(cluster: PrivateRedisCluster, command: 'publish' | 'spublish') {
  const node = cluster.nodes[0];
  const channel =
    command === 'publish' ? 'bh-bench:containment' : `bh-bench:{${await slotTagOn(cluster, node.port)}}:containment`;
  const subscriber = new Redis({ port: node.port, lazyConnect: true });
  await subscriber.connect();
  let heard = 0;
  subscriber.on(command === 'publish' ? 'message' : 'smessage', () => heard++);
  await (command === 'publish' ? subscriber.subscribe(channel) : subscriber.ssubscribe(channel));
  const publisher = new Redis({ port: node.port });
  const ports = cluster.nodes.map((each) => each.port);
  const cpuBefore = await totalCpu(ports);
  const started = performance.now();
  for (let sent = 0; sent < MESSAGES; sent += 100) {
    const batch = publisher.pipeline();
    for (let n = 0; n < 100; n++) batch[command](channel, 'acme');
    await batch.exec();
  }
  const seconds = (performance.now() - started) / 1_000;
  await wait(200);
  const cpu = (await totalCpu(ports)) - cpuBefore;
  if (heard !== MESSAGES) problems.push(`${command}: the subscriber heard ${heard} of ${MESSAGES}`);
  publisher.disconnect();
  subscriber.disconnect();
  return {
    command,
    'messages/s': Math.round(MESSAGES / seconds),
    'Redis CPU µs/message (all nodes)': (cpu * 1e6) / MESSAGES,
  };
}

/** A hash tag whose slot the node at `port` serves: a sharded channel must live on its node. */
async function slotTagOn(cluster: PrivateRedisCluster, port: number): Promise<string> {
  for (let n = 0; ; n++) if ((await cluster.primaryOf(`{shard-${n}}`)).port === port) return `shard-${n}`;
}

async function main(): Promise<void> {
  const standalone = await PrivateRedis.start();
  const cluster = await PrivateRedisCluster.start({ primaries: 3 });
  const results: Record<string, unknown> = {};
  try {
    const one = await connect({ url: standalone.url });
    const many = await connect({ cluster: { nodes: cluster.urls } });
    const ports = cluster.nodes.map((node) => node.port);
    const rows = [];
    for (let round = 0; round < (QUICK ? 1 : 2); round++) {
      rows.push(await decisions('one Redis', one, [standalone.port]));
      rows.push(await decisions('cluster, 3 primaries', many, ports));
    }
    printTable(
      `(a) decisions, ${TENANTS} tenants round robin, ${IN_FLIGHT} in flight, ${DURATION_MS / 1000} s runs`,
      rows,
    );
    results.decisions = rows;
    const shares = await spread(many);
    printTable(`(b) tenants per primary, ${TENANTS} tenants`, shares);
    results.spread = shares;
    const pubsub = [await publishing(cluster, 'publish'), await publishing(cluster, 'spublish')];
    printTable(`(d) pub/sub on the cluster, ${MESSAGES} messages, one subscriber`, pubsub);
    results.pubsub = pubsub;
    one.disconnect();
    many.disconnect();
  } finally {
    await cluster.dispose();
    await standalone.dispose();
  }

  const windows = [];
  const group = await PrivateSentinelGroup.start({ replicas: 1, sentinels: 3 });
  try {
    const redis = await connect({ sentinel: { name: group.name, nodes: group.sentinelUrls } });
    windows.push(await failover('Sentinel', redis, () => group.primary.stop({ keepData: false })));
    redis.disconnect();
  } finally {
    await group.dispose();
  }
  if (!QUICK) {
    const replicated = await PrivateRedisCluster.start({ primaries: 3, replicas: 1 });
    try {
      const redis = await connect({ cluster: { nodes: replicated.urls } });
      const primary = await replicated.primaryOf('{tenant-failover}');
      windows.push(await failover('Cluster', redis, () => primary.stop({ keepData: false })));
      redis.disconnect();
    } finally {
      await replicated.dispose();
    }
  }
  printTable('(c) failover: one decision every 5 ms, the primary SIGKILLed', windows);
  results.failover = windows;

  process.stdout.write(`\nchecks: ${problems.length === 0 ? 'all passed' : problems.join('; ')}\n`);
  writeResultsUnlessQuick('redis-topologies', QUICK, {
    tenants: TENANTS,
    durationMs: DURATION_MS,
    ...results,
    problems,
  });
  if (problems.length > 0) process.exitCode = 1;
}

runMain('redis-topologies', main, { budgetMs: 180_000 });

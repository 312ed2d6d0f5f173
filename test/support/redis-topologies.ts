import { execFile } from 'node:child_process';
import { setTimeout as wait } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort, PrivateRedis } from './private-redis';

const run = promisify(execFile);
/** How long a fresh cluster or Sentinel group may take to agree before start() gives up. */
const READY_WITHIN_MS = 120_000;

/** `redis-cli` with `args` against 127.0.0.1:`port`: its output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 });
  return stdout;
}

/** Polls `ready` until it holds, or throws `what` after READY_WITHIN_MS. */
async function until(what: string, ready: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + READY_WITHIN_MS;
  while (!(await ready().catch(() => false))) {
    if (performance.now() > deadline) throw new Error(`${what} within ${READY_WITHIN_MS} ms`);
    await wait(50);
  }
}

/**
 * A Redis Cluster of one test file's own, from the `redis-server` on PATH: `primaries` nodes
 * (each with `replicas` replicas) on free loopback ports, slots spread by `redis-cli --cluster
 * create`, a node timeout of one second so a failover takes a few. `dispose()` in afterAll.
 */
export class PrivateRedisCluster {
  private constructor(readonly nodes: PrivateRedis[]) {}

  static async start(options: { primaries?: number; replicas?: number } = {}): Promise<PrivateRedisCluster> {
    const primaries = options.primaries ?? 3;
    const replicas = options.replicas ?? 0;
    const nodes: PrivateRedis[] = [];
    const cluster = new PrivateRedisCluster(nodes);
    try {
      for (let index = 0; index < primaries * (1 + replicas); index++) {
        // The cluster bus gets a port of its own: port + 10000 may be past 65535.
        const busPort = await freePort();
        const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'];
        args.push('--cluster-node-timeout', '1000', '--cluster-port', String(busPort));
        // An idle replica's data looks old by the default rule (10 node timeouts): it may take
        // over whenever its primary fails, as the tests kill primaries between writes.
        args.push('--cluster-replica-validity-factor', '0');
        nodes.push(await PrivateRedis.start({ args }));
      }
      const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
      await run(
        'redis-cli',
        ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'],
        {
          timeout: 20_000,
        },
      );
      await cluster.untilHealthy();
    } catch (error) {
      await cluster.dispose();
      throw error;
    }
    return cluster;
  }

  /** The nodes' URLs, what `store.cluster.nodes` takes. */
  get urls(): string[] {
    return this.nodes.map((node) => node.url);
  }

  /** Resolves once every running node sees the cluster as ok, every slot served. */
  async untilHealthy(): Promise<void> {
    await until('the cluster was not ok', async () => {
      for (const node of this.nodes.filter((each) => each.running)) {
        const info = await redisCli(node.port, 'cluster', 'info');
        if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false;
      }
      return true;
    });
  }

  /** The node serving `key`'s slot as its primary. */
  async primaryOf(key: string): Promise<PrivateRedis> {
    const running = this.nodes.find((node) => node.running)!;
    const slot = Number((await redisCli(running.port, 'cluster', 'keyslot', key)).trim());
    const shards = await redisCli(running.port, 'cluster', 'nodes');
    for (const line of shards.split('\n')) {
      const [, address, flags, , , , , , ...ranges] = line.split(' ');
      if (!flags?.includes('master') || flags.includes('fail')) continue;
      for (const range of ranges) {
        const [from, to = from] = range.split('-').map(Number);
        if (slot >= from && slot <= to)
          return this.nodes.find((node) => address.startsWith(`127.0.0.1:${node.port}@`))!;
      }
    }
    throw new Error(`no primary serves the slot of ${key}`);
  }

  /**
   * Moves the slot of `key` to the primary `to`, keys and all, as `redis-cli --cluster reshard`
   * does: IMPORTING on `to`, MIGRATING on the owner, each key MIGRATEd, then the slot given to
   * `to` on every primary.
   */
  async moveSlotOf(key: string, to: PrivateRedis): Promise<void> {
    const from = await this.primaryOf(key);
    if (from === to) throw new Error(`the slot of ${key} is already on ${to.port}`);
    const slot = (await redisCli(from.port, 'cluster', 'keyslot', key)).trim();
    const idOf = async (node: PrivateRedis) => (await redisCli(node.port, 'cluster', 'myid')).trim();
    const [fromId, toId] = [await idOf(from), await idOf(to)];
    await redisCli(to.port, 'cluster', 'setslot', slot, 'importing', fromId);
    await redisCli(from.port, 'cluster', 'setslot', slot, 'migrating', toId);
    for (;;) {
      const keys = (await redisCli(from.port, 'cluster', 'getkeysinslot', slot, '100')).split('\n').filter(Boolean);
      if (keys.length === 0) break;
      await redisCli(from.port, 'migrate', '127.0.0.1', String(to.port), '', '0', '5000', 'keys', ...keys);
    }
    for (const node of this.nodes.filter((each) => each.running)) {
      await redisCli(node.port, 'cluster', 'setslot', slot, 'node', toId).catch(() => undefined);
    }
    await until(`the slot of ${key} did not move`, async () => (await this.primaryOf(key)) === to);
  }

  async dispose(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.dispose()));
  }
}

/**
 * A primary with `replicas` replicas watched by `sentinels` Sentinels (quorum: a majority), all
 * from the `redis-server` on PATH on free loopback ports, one second to call the primary down.
 * `dispose()` in afterAll.
 */
export class PrivateSentinelGroup {
  private constructor(
    readonly name: string,
    readonly primary: PrivateRedis,
    readonly replicas: PrivateRedis[],
    readonly sentinels: PrivateRedis[],
  ) {}

  static async start(options: { replicas?: number; sentinels?: number } = {}): Promise<PrivateSentinelGroup> {
    const name = 'bulkhead-primary';
    const primary = await PrivateRedis.start();
    const group = new PrivateSentinelGroup(name, primary, [], []);
    try {
      for (let index = 0; index < (options.replicas ?? 1); index++) {
        group.replicas.push(await PrivateRedis.start({ args: ['--replicaof', '127.0.0.1', String(primary.port)] }));
      }
      const count = options.sentinels ?? 3;
      const config = [
        `sentinel monitor ${name} 127.0.0.1 ${primary.port} ${Math.floor(count / 2) + 1}`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        '',
      ].join('\n');
      for (let index = 0; index < count; index++) {
        group.sentinels.push(await PrivateRedis.start({ config, args: ['--sentinel'] }));
      }
      await until('the replicas did not sync', async () => {
        for (const replica of group.replicas) {
          if (!(await redisCli(replica.port, 'info', 'replication')).includes('master_link_status:up')) return false;
        }
        return true;
      });
      await until('the Sentinels did not find the replicas', async () => {
        const known = await redisCli(group.sentinels[0].port, 'sentinel', 'replicas', name);
        return group.replicas.every((replica) => known.includes(String(replica.port)));
      });
    } catch (error) {
      await group.dispose();
      throw error;
    }
    return group;
  }

  /** The Sentinels' URLs, what `store.sentinel.nodes` takes. */
  get sentinelUrls(): string[] {
    return this.sentinels.map((sentinel) => sentinel.url);
  }

  /** The port the Sentinels name as the primary now. */
  async primaryPort(): Promise<number> {
    const [, port] = (await redisCli(this.sentinels[0].port, 'sentinel', 'get-master-addr-by-name', this.name)).split(
      '\n',
    );
    return Number(port);
  }

  async dispose(): Promise<void> {
    await Promise.all([this.primary, ...this.replicas, ...this.sentinels].map((node) => node.dispose()));
  }
}

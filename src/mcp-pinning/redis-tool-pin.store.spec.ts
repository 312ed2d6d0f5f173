import { RedisToolPinStore, TOOL_PIN_KEY_KIND } from './redis-tool-pin.store';
import { describeToolPinStore, echoRecord } from './tool-pin-store.contract';
import { closeRedis, connectRedis, hashTag, keysUnder, RedisTestRun } from '../../test/support/redis';
import { describeRedis } from '../../test/support/redis-availability';

describeRedis('RedisToolPinStore', () => {
  const run = RedisTestRun.setUp();

  describeToolPinStore('RedisToolPinStore', () => new RedisToolPinStore(run.redis, run.keys()));

  it('keeps one hash per tool under the prefix, the tool id as hash tag, with no TTL', async () => {
    const keys = run.keys();
    const store = new RedisToolPinStore(run.redis, keys);

    await store.see('up.echo', echoRecord('says the text back'));

    const written = await keysUnder(run.redis, keys.prefix);
    expect(written).toEqual([`${keys.prefix}{up.echo}:${TOOL_PIN_KEY_KIND}`]);
    expect(hashTag(written[0])).toBe('up.echo');
    await expect(run.redis.pttl(written[0])).resolves.toBe(-1);
  });

  it('agrees across replicas: what one approves, the other compares with', async () => {
    const keys = run.keys();
    const one = new RedisToolPinStore(run.redis, keys);
    const other = new RedisToolPinStore(await run.connection(), keys);
    const first = echoRecord('says the text back');
    const changed = echoRecord('says the text back, shorter');
    await one.see('up.echo', first);
    await other.see('up.echo', changed);

    await one.approve('up.echo');

    await expect(other.see('up.echo', changed)).resolves.toEqual({ outcome: 'same', approved: changed });
  });

  it('fails a decision on a key another program wrote, never passes it', async () => {
    const keys = run.keys();
    const store = new RedisToolPinStore(run.redis, keys);
    await run.redis.hset(store.pinKey('up.echo'), 'approvedHash', 'x', 'approved', 'not json');

    await expect(store.see('up.echo', echoRecord('says the text back'))).rejects.toMatchObject({
      name: 'RedisReplyError',
    });
  });

  it('rejects when Redis cannot be asked', async () => {
    const closed = await connectRedis();
    await closeRedis(closed);
    const store = new RedisToolPinStore(closed, run.keys());

    await expect(store.see('up.echo', echoRecord('says the text back'))).rejects.toBeInstanceOf(Error);
  });
});

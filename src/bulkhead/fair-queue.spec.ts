import { FairQueue, type FairQueueNode, type TenantQueue } from './fair-queue';

class Node implements FairQueueNode<Node> {
  prev: Node | undefined = undefined;
  next: Node | undefined = undefined;
  owner: TenantQueue<Node> | undefined = undefined;

  constructor(readonly id: string) {}

  /** The tenant is the id's first letter: `a1` belongs to tenant `a`. */
  get tenant(): string {
    return this.id[0];
  }
}

function queueOf(...ids: string[]): { queue: FairQueue<Node>; nodes: Record<string, Node> } {
  const queue = new FairQueue<Node>();
  const nodes: Record<string, Node> = {};
  for (const id of ids) {
    nodes[id] = new Node(id);
    queue.push(nodes[id]);
  }
  return { queue, nodes };
}

/** Shifts `count` nodes (or all of them) and returns their ids in the order served. */
function drain(queue: FairQueue<Node>, count = Number.POSITIVE_INFINITY): string[] {
  const served: string[] = [];
  while (served.length < count) {
    const node = queue.shift();
    if (!node) break;
    served.push(node.id);
  }
  return served;
}

describe('FairQueue', () => {
  it('returns undefined when shifting an empty queue', () => {
    const queue = new FairQueue<Node>();
    expect(queue.shift()).toBeUndefined();
    expect(queue.size).toBe(0);
    expect(queue.sizeOf('a')).toBe(0);
  });

  it('returns undefined again once every node has been shifted', () => {
    const { queue } = queueOf('a1', 'b1');
    expect(drain(queue)).toEqual(['a1', 'b1']);
    expect(queue.shift()).toBeUndefined();
    expect(queue.size).toBe(0);
  });

  it('serves one tenant first in, first out', () => {
    const { queue } = queueOf('a1', 'a2', 'a3', 'a4');
    expect(drain(queue)).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('serves tenants round-robin, each in its own arrival order', () => {
    const { queue } = queueOf('a1', 'a2', 'a3', 'b1', 'b2', 'c1');
    expect(drain(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  });

  it('serves a tenant that joins before anything is served after the tenants already waiting', () => {
    const { queue } = queueOf('a1', 'a2', 'b1', 'b2');
    queue.push(new Node('c1'));
    expect(drain(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2']);
  });

  it('serves a tenant that joins mid-round at the end of the current round', () => {
    const { queue } = queueOf('a1', 'a2', 'b1', 'b2');
    expect(drain(queue, 1)).toEqual(['a1']);
    // b's turn is next; the round that starts at b goes b, a, and the newcomer comes last.
    queue.push(new Node('c1'));
    expect(drain(queue)).toEqual(['b1', 'a2', 'c1', 'b2']);
  });

  it('lets a tenant that left the ring rejoin at the end of the current round', () => {
    const { queue } = queueOf('a1', 'b1', 'b2', 'c1', 'c2');
    expect(drain(queue, 1)).toEqual(['a1']);
    expect(queue.sizeOf('a')).toBe(0);
    queue.push(new Node('a2'));
    expect(drain(queue)).toEqual(['b1', 'c1', 'a2', 'b2', 'c2']);
  });

  it('keeps size and sizeOf right through pushes and shifts', () => {
    const { queue } = queueOf('a1', 'a2', 'b1');
    expect([queue.size, queue.sizeOf('a'), queue.sizeOf('b'), queue.sizeOf('c')]).toEqual([3, 2, 1, 0]);
    queue.shift();
    expect([queue.size, queue.sizeOf('a'), queue.sizeOf('b')]).toEqual([2, 1, 1]);
    queue.push(new Node('c1'));
    expect([queue.size, queue.sizeOf('c')]).toEqual([3, 1]);
    drain(queue);
    expect([queue.size, queue.sizeOf('a'), queue.sizeOf('b'), queue.sizeOf('c')]).toEqual([0, 0, 0, 0]);
  });

  describe('remove', () => {
    it('removes the head of a tenant queue', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'a3');
      queue.remove(nodes.a1);
      expect([queue.size, queue.sizeOf('a')]).toEqual([2, 2]);
      expect(drain(queue)).toEqual(['a2', 'a3']);
    });

    it('removes a node from the middle of a tenant queue', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'a3');
      queue.remove(nodes.a2);
      expect([queue.size, queue.sizeOf('a')]).toEqual([2, 2]);
      expect(drain(queue)).toEqual(['a1', 'a3']);
    });

    it('removes the tail of a tenant queue, and a later push lands after the new tail', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'a3');
      queue.remove(nodes.a3);
      queue.push(new Node('a4'));
      expect([queue.size, queue.sizeOf('a')]).toEqual([3, 3]);
      expect(drain(queue)).toEqual(['a1', 'a2', 'a4']);
    });

    it('removes the only node and leaves an empty queue that works again', () => {
      const { queue, nodes } = queueOf('a1');
      queue.remove(nodes.a1);
      expect([queue.size, queue.sizeOf('a')]).toEqual([0, 0]);
      expect(queue.shift()).toBeUndefined();
      queue.push(new Node('b1'));
      expect(drain(queue)).toEqual(['b1']);
    });

    it('clears the links of a removed node', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'a3');
      queue.remove(nodes.a2);
      expect([nodes.a2.prev, nodes.a2.next, nodes.a2.owner]).toEqual([undefined, undefined, undefined]);
      expect(nodes.a1.next).toBe(nodes.a3);
      expect(nodes.a3.prev).toBe(nodes.a1);
    });

    it('does nothing for a node that was never pushed', () => {
      const { queue } = queueOf('a1', 'b1');
      queue.remove(new Node('a9'));
      expect([queue.size, queue.sizeOf('a')]).toEqual([2, 1]);
      expect(drain(queue)).toEqual(['a1', 'b1']);
    });

    it('does nothing for a node already removed or shifted', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'b1');
      queue.remove(nodes.a2);
      queue.remove(nodes.a2);
      const first = queue.shift();
      expect(first).toBe(nodes.a1);
      queue.remove(nodes.a1);
      expect([queue.size, queue.sizeOf('a'), queue.sizeOf('b')]).toEqual([1, 0, 1]);
      expect(drain(queue)).toEqual(['b1']);
    });

    it('takes a tenant whose queue empties out of the ring and passes its turn on', () => {
      const { queue, nodes } = queueOf('a1', 'b1', 'b2', 'c1');
      // a holds the turn; removing its only node hands the turn to b.
      queue.remove(nodes.a1);
      expect(queue.sizeOf('a')).toBe(0);
      expect(drain(queue)).toEqual(['b1', 'c1', 'b2']);
    });

    it('keeps the turn where it is when a tenant other than the current one leaves', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'b1', 'c1', 'c2');
      queue.remove(nodes.b1);
      expect([queue.size, queue.sizeOf('b')]).toEqual([4, 0]);
      expect(drain(queue)).toEqual(['a1', 'c1', 'a2', 'c2']);
    });

    it('lets a tenant that emptied by removal rejoin as a newcomer', () => {
      const { queue, nodes } = queueOf('a1', 'a2', 'b1', 'c1');
      queue.remove(nodes.b1);
      queue.push(new Node('b2'));
      // The turn is still a's; b now joins at the end of that round, after c.
      expect(drain(queue)).toEqual(['a1', 'c1', 'b2', 'a2']);
    });
  });
});

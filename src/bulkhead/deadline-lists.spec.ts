import { type DeadlineList, DeadlineLists, type DeadlineNode } from './deadline-lists';

class Node implements DeadlineNode<Node> {
  deadline = 0;
  deadlinePrev: Node | undefined;
  deadlineNext: Node | undefined;
  deadlineList: DeadlineList<Node> | undefined;

  constructor(readonly id: string) {}
}

/** Takes every node due at `now`, in the order taken. */
function drain(lists: DeadlineLists<Node>, now: number): string[] {
  const taken: string[] = [];
  for (let node = lists.takeDue(now); node; node = lists.takeDue(now)) taken.push(node.id);
  return taken;
}

describe('DeadlineLists', () => {
  it('answers the earliest deadline over every TTL, and nothing when empty', () => {
    const lists = new DeadlineLists<Node>();
    expect(lists.earliest()).toBeUndefined();

    lists.add(new Node('a'), 1_000, 0);
    lists.add(new Node('b'), 300, 100);

    expect(lists.earliest()).toBe(400);
  });

  it('takes what is due earliest first, across TTLs, and leaves the rest', () => {
    const lists = new DeadlineLists<Node>();
    lists.add(new Node('long'), 1_000, 0);
    lists.add(new Node('short-1'), 100, 50);
    lists.add(new Node('short-2'), 100, 60);
    lists.add(new Node('mid'), 500, 0);

    expect(drain(lists, 600)).toEqual(['short-1', 'short-2', 'mid']);
    expect(lists.earliest()).toBe(1_000);
    expect(drain(lists, 1_000)).toEqual(['long']);
    expect(lists.earliest()).toBeUndefined();
  });

  it('removes a node from anywhere in its list in place, and ignores one it does not hold', () => {
    const lists = new DeadlineLists<Node>();
    const [first, middle, last] = ['first', 'middle', 'last'].map((id) => new Node(id));
    lists.add(first, 100, 0);
    lists.add(middle, 100, 1);
    lists.add(last, 100, 2);

    lists.remove(middle);
    lists.remove(middle);
    lists.remove(new Node('stranger'));

    expect(drain(lists, 1_000)).toEqual(['first', 'last']);
    expect(middle.deadlineList).toBeUndefined();
  });

  it('drops a TTL whose list empties, so the lists do not grow with the TTLs seen', () => {
    const lists = new DeadlineLists<Node>();
    for (let ttl = 1; ttl <= 1_000; ttl++) {
      const node = new Node(`n${ttl}`);
      lists.add(node, ttl, 0);
      lists.remove(node);
    }

    expect(lists.ttlCount).toBe(0);
    expect(lists.earliest()).toBeUndefined();
  });
});

/**
 * What loading an o200k tokenizer costs a process, measured in one of its own started with
 * --expose-gc, where nothing else has loaded it yet: the time to require gpt-tokenizer and
 * count a first text (its ranks are decoded on first use), and the heap it keeps after a
 * forced GC. The byte bound loads nothing.
 */
import { forceGc, usedHeap } from '../support/heap';
import { exitWithParent, sendResult } from '../support/processes';

export const LOAD_COST_NODE_ARGS = ['--expose-gc'];

export interface LoadCost {
  loadAndFirstCountMs: number;
  retainedHeapBytes: number;
}

async function loadCostChild(): Promise<void> {
  forceGc();
  const heapBefore = usedHeap();
  const started = performance.now();
  const tokenizer = await import('gpt-tokenizer');
  tokenizer.countTokens('warm up the ranks');
  const loadAndFirstCountMs = performance.now() - started;
  // The module cache keeps the tokenizer, as it would in the service.
  forceGc();
  sendResult({ loadAndFirstCountMs, retainedHeapBytes: usedHeap() - heapBefore } satisfies LoadCost);
}

if (require.main === module) {
  exitWithParent();
  loadCostChild().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`load-cost child failed: ${(error as Error).stack ?? String(error)}\n`);
      process.exit(1);
    },
  );
}

import type { PinApproval, PinRecord, PinVerdict, PinView, ToolPinStore } from './tool-pin.store';

interface Pin {
  approved: PinRecord;
  pending: PinRecord | undefined;
}

/**
 * The pins of one process. Each decision is one synchronous block; records are frozen copies, so
 * nothing a caller holds changes what is stored. Bounded by the registry's mcp tools: only
 * those are ever seen.
 */
export class MemoryToolPinStore implements ToolPinStore {
  private readonly pins = new Map<string, Pin>();

  see(tool: string, seen: PinRecord): PinVerdict {
    const pin = this.pins.get(tool);
    if (!pin) {
      const approved = frozen(seen);
      this.pins.set(tool, { approved, pending: undefined });
      return { outcome: 'pinned', approved };
    }
    if (pin.approved.sha256 === seen.sha256) {
      // Back to the approved definition: what was pending must not be approvable any more.
      pin.pending = undefined;
      return { outcome: 'same', approved: pin.approved };
    }
    pin.pending = frozen(seen);
    return { outcome: 'changed', approved: pin.approved };
  }

  approve(tool: string, expected?: string): PinApproval {
    const pin = this.pins.get(tool);
    if (!pin?.pending) return { outcome: 'nothing_pending', approved: pin?.approved };
    if (expected !== undefined && expected !== pin.pending.sha256) return { outcome: 'stale', pending: pin.pending };
    const previous = pin.approved;
    pin.approved = pin.pending;
    pin.pending = undefined;
    return { outcome: 'approved', previous, approved: pin.approved };
  }

  view(tool: string): PinView {
    const pin = this.pins.get(tool);
    return { approved: pin?.approved, pending: pin?.pending };
  }
}

function frozen(record: PinRecord): PinRecord {
  return Object.freeze({ sha256: record.sha256, definition: structuredClone(record.definition) });
}

import type { Awaitable } from '../common';
import type { PinnableDefinition } from './tool-definition-hash';

/** One definition of a tool and its hash ({@link definitionHash}). */
export interface PinRecord {
  readonly sha256: string;
  readonly definition: PinnableDefinition;
}

/**
 * What a store decided of a definition a replica saw: `pinned`, the tool had no pin and this
 * definition is its pin now (first seen); `same`, it is the approved one; `changed`, it is not,
 * and it is kept as the tool's pending definition (what an approval would approve).
 */
export interface PinVerdict {
  readonly outcome: 'pinned' | 'same' | 'changed';
  /** The tool's approved definition after the decision. */
  readonly approved: PinRecord;
}

/**
 * What an approval did: `approved`, the pending definition is the approved one now (`previous`
 * was); `nothing_pending`, no definition waits (never changed, approved already, or back to the
 * approved one), `approved` is the current one if the tool has a pin; `stale`, the caller named a
 * hash other than the pending one's: the tool changed again since the operator looked, and
 * nothing was approved.
 */
export type PinApproval =
  | { readonly outcome: 'approved'; readonly previous: PinRecord; readonly approved: PinRecord }
  | { readonly outcome: 'nothing_pending'; readonly approved: PinRecord | undefined }
  | { readonly outcome: 'stale'; readonly pending: PinRecord };

/** A tool's pin as the store holds it. */
export interface PinView {
  readonly approved: PinRecord | undefined;
  readonly pending: PinRecord | undefined;
}

/**
 * The approved definitions of upstream MCP tools, by tool id, shared by every replica, so a
 * definition one replica pinned or an operator approved on one is the one every replica
 * compares with. Whole decisions only (one Lua script each in Redis, one synchronous block in
 * memory). Pins never expire: a pin that lapsed would pin whatever the server lists next, the
 * very change it is there to catch. They are as many as the registry's mcp tools.
 */
export interface ToolPinStore {
  /** Compares `seen` with the tool's pin: pins it when the tool has none, keeps it as pending when it differs. */
  see(tool: string, seen: PinRecord): Awaitable<PinVerdict>;
  /**
   * Makes the pending definition the approved one; with `expected`, only when the pending one
   * has that hash (see {@link PinApproval}).
   */
  approve(tool: string, expected?: string): Awaitable<PinApproval>;
  /** The tool's approved and pending definitions. */
  view(tool: string): Awaitable<PinView>;
}

/** Injection token of the {@link ToolPinStore}. */
export const ToolPinStore = Symbol('ToolPinStore');

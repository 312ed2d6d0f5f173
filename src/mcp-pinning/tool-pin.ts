import { type Audience, EVERYONE, ResilienceError } from '../common';
import type { PinRecord } from './tool-pin.store';

/**
 * What pinning does with an upstream MCP tool: `enforce`, a tool whose definition differs from
 * the approved one is quarantined (not listed, its calls refused `tool_changed`) until an
 * operator approves it; `warn`, it is still served, and the change is reported all the same
 * (event, log line, metric); `off`, its definition is neither hashed nor compared.
 */
export const PINNING_MODES = ['off', 'warn', 'enforce'] as const;
export type PinningMode = (typeof PINNING_MODES)[number];

/** How one tool is pinned. */
export interface PinSettings {
  readonly mode: PinningMode;
  /** The sha256 the config pins it to: the approved hash, which only the config moves. */
  readonly configPin?: string;
  /** Who may see its events (those who may call the tool). @default EVERYONE */
  readonly audience?: Audience;
}

/**
 * Where a tool stands: `unseen`, its server has not been listed yet (nothing to compare: served,
 * as without pinning); `approved`, the definition seen is the approved one; `changed`, it is not;
 * `unchecked`, seen but the store could not be asked and no approved hash is known here yet
 * (served, asked again on the next refresh).
 */
export type PinState = 'unseen' | 'approved' | 'changed' | 'unchecked';

/**
 * What happened to a tool's pin: `pinned` (first seen: this definition is its pin), `changed`
 * (a definition other than the approved one; once per new definition per replica), `approved`
 * (an operator approved it through this replica), `restored` (the definition seen is the
 * approved one again: approved through another replica, or the server went back), `unchecked`
 * (the store could not be asked).
 */
export interface ToolPinEvent {
  readonly kind: 'pinned' | 'changed' | 'approved' | 'restored' | 'unchecked';
  readonly tool: string;
  readonly mode: Exclude<PinningMode, 'off'>;
  /** The hash of the definition seen. */
  readonly sha256: string;
  /** The approved hash, where known. */
  readonly approvedSha256: string | undefined;
  readonly audience: Audience;
}

/** One tool's pin as this replica knows it: its settings, the definition seen last, and its state. */
export class ToolPin {
  state: PinState = 'unseen';
  /** The definition seen last, hashed. */
  seen: PinRecord | undefined;
  /** The approved hash as last heard (the store's, or the config's). */
  approvedSha256: string | undefined;
  /** The hash last reported `changed`, so a change is counted once, however often it is seen. */
  reported: string | undefined;
  /** Goes up with each decision started: an answer that is not the latest's is dropped. */
  sequence = 0;
  refreshing = false;
  readonly audience: Audience;

  constructor(
    readonly tool: string,
    readonly settings: PinSettings,
  ) {
    this.audience = settings.audience ?? EVERYONE;
  }

  /** Whether the tool is listed and called: all but a changed tool under `enforce`. */
  get served(): boolean {
    return !(this.state === 'changed' && this.settings.mode === 'enforce');
  }

  /** The refusal of a call to a quarantined tool. */
  refusal(): ResilienceError {
    return new ResilienceError(
      'tool_changed',
      `tool '${this.tool}' changed its definition upstream since it was approved: ` +
        'it is quarantined until an operator approves the new one',
    );
  }
}

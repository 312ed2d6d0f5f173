import { type Awaitable, type Clock, Listeners, noop, ResilienceError, type TimerHandle } from '../common';
import { definitionDiff, type DefinitionDiff } from './definition-diff';
import { definitionHash, type PinnableDefinition, pinnableOf } from './tool-definition-hash';
import { type PinSettings, type PinState, ToolPin, type ToolPinEvent } from './tool-pin';
import type { PinRecord, PinVerdict, ToolPinStore } from './tool-pin.store';

/** How often a replica asks the store again about its changed and unchecked tools: an approval elsewhere shows here within it. */
export const PIN_REFRESH_MS = 5_000;

/** What decided a definition: the store's (or the config's) verdict, or `unchecked` when neither could be asked. */
type Outcome = PinVerdict['outcome'] | 'unchecked';

/** What an approval answers: the hashes and the fields that changed. */
export interface PinApprovalAnswer {
  readonly tool: string;
  /** Whether this request approved a definition (false: nothing was waiting). */
  readonly approved: boolean;
  readonly sha256: string | undefined;
  readonly previousSha256: string | undefined;
  readonly changes: DefinitionDiff;
}

/** A tool's pin, for operators. */
export interface PinStatus {
  readonly tool: string;
  readonly pinning: PinSettings['mode'];
  readonly state: PinState;
  readonly pinnedInConfig: boolean;
  readonly seenSha256: string | undefined;
  readonly approved: PinRecord | { readonly sha256: string } | undefined;
  readonly pending: PinRecord | undefined;
  readonly changes: DefinitionDiff;
}

/**
 * The pins of the registry's upstream MCP tools on this replica, against a shared
 * {@link ToolPinStore}. Every definition the tool's server lists is {@link see}n: the store
 * decides (first seen: pinned; the approved one: same; another: changed, kept pending), or the
 * config's pin does, which no approval moves. A changed tool under `enforce` is quarantined: not
 * {@link ToolPin.served}, its calls refused at {@link admit}. Approvals go to the store; a
 * replica learns of one made elsewhere when it asks again: on a refused call, and every
 * {@link PIN_REFRESH_MS} while it has changed tools (on the clock, `unref`'d).
 */
export class ToolPins {
  private readonly pins = new Map<string, ToolPin>();
  private readonly events = new Listeners<[ToolPinEvent]>();
  private readonly servingChanges = new Listeners<[]>();
  private timer: TimerHandle | undefined;
  private closed = false;

  constructor(
    private readonly store: ToolPinStore,
    private readonly clock: Clock,
  ) {}

  /** Tool `tool` is pinned as `settings` say; answers its pin (a tool tracked twice keeps its first settings). */
  track(tool: string, settings: PinSettings): ToolPin {
    let pin = this.pins.get(tool);
    if (!pin) {
      pin = new ToolPin(tool, settings);
      this.pins.set(tool, pin);
    }
    return pin;
  }

  /** Every pinned tool (pinning not `off`). */
  all(): ToolPin[] {
    return [...this.pins.values()].filter((pin) => pin.settings.mode !== 'off');
  }

  /** Compares the definition its server listed with the tool's pin, and acts on the answer. */
  async see(pin: ToolPin, definition: PinnableDefinition): Promise<void> {
    if (pin.settings.mode === 'off' || this.closed) return;
    const seen: PinRecord = { sha256: definitionHash(definition), definition: pinnableOf(definition) };
    pin.seen = seen;
    const known = pin.settings.configPin ?? pin.approvedSha256;
    if (known !== undefined && known !== seen.sha256 && pin.state !== 'changed') {
      // Quarantined at once, in the turn the listing arrives: no call runs on a definition
      // nobody approved while the store is asked (it may answer that another replica approved it).
      const wasServed = pin.served;
      pin.state = 'changed';
      if (pin.served !== wasServed) this.servingChanges.emit();
    }
    await this.decide(pin, seen);
  }

  /** Throws `tool_changed` when the tool is quarantined, and asks the store again (an approval may be waiting there). */
  admit(pin: ToolPin): void {
    if (pin.served) return;
    this.refresh(pin).catch(noop);
    throw pin.refusal();
  }

  /** Calls `listener` on each event of any tool's pin; returns its remover. */
  onEvent(listener: (event: ToolPinEvent) => void): () => void {
    return this.events.add(listener);
  }

  /** Calls `listener` when a tool becomes quarantined or served again; returns its remover. */
  onServingChange(listener: () => void): () => void {
    return this.servingChanges.add(listener);
  }

  /**
   * Approves the tool's pending definition (with `expected`, only if that is its hash): every
   * replica compares with it from then on. `not_found` for a tool not pinned; 409
   * `invalid_request` for one the config pins; `tool_changed` when `expected` is not what waits.
   */
  async approve(tool: string, expected?: string): Promise<PinApprovalAnswer> {
    const pin = this.pinned(tool);
    if (pin.settings.configPin !== undefined) {
      const seen = pin.seen ? `: to accept the definition it lists now, set its pin to ${pin.seen.sha256}` : '';
      throw new ResilienceError('invalid_request', `tool '${tool}' is pinned in the config${seen}`, { status: 409 });
    }
    const approval = await this.ask(() => this.store.approve(tool, expected));
    if (approval.outcome === 'stale') {
      throw new ResilienceError(
        'tool_changed',
        `tool '${tool}' changed again: the definition waiting is ${approval.pending.sha256}, nothing was approved`,
      );
    }
    if (approval.outcome === 'nothing_pending') {
      const current = approval.approved?.sha256;
      if (expected !== undefined && expected !== current) {
        throw new ResilienceError('tool_changed', `tool '${tool}' has no definition ${expected} waiting`);
      }
      if (pin.seen) await this.decide(pin, pin.seen);
      return { tool, approved: false, sha256: current, previousSha256: current, changes: {} };
    }
    pin.approvedSha256 = approval.approved.sha256;
    this.emit(pin, 'approved', approval.approved.sha256);
    if (pin.seen) await this.decide(pin, pin.seen, true);
    return {
      tool,
      approved: true,
      sha256: approval.approved.sha256,
      previousSha256: approval.previous.sha256,
      changes: definitionDiff(approval.previous.definition, approval.approved.definition),
    };
  }

  /** The tool's pin as this replica and the store know it. */
  async status(tool: string): Promise<PinStatus> {
    const pin = this.pinned(tool);
    const configPin = pin.settings.configPin;
    const view = configPin === undefined ? await this.ask(() => this.store.view(tool)) : undefined;
    const pending = view?.pending ?? (pin.state === 'changed' && configPin !== undefined ? pin.seen : undefined);
    const approved = configPin === undefined ? view?.approved : { sha256: configPin };
    const before = approved && 'definition' in approved ? approved.definition : undefined;
    return {
      tool,
      pinning: pin.settings.mode,
      state: pin.state,
      pinnedInConfig: configPin !== undefined,
      seenSha256: pin.seen?.sha256,
      approved,
      pending,
      changes: pending ? definitionDiff(before, pending.definition) : {},
    };
  }

  /** Stops asking again (the app is closing). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearTimer(this.timer);
    this.timer = undefined;
  }

  /** An operator's request to the store; one it cannot answer is `unavailable` (503), never a guess. */
  private async ask<T>(request: () => Awaitable<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw new ResilienceError('unavailable', 'the tool pin store could not be asked', { cause: error });
    }
  }

  private pinned(tool: string): ToolPin {
    const pin = this.pins.get(tool);
    if (!pin || pin.settings.mode === 'off') throw new ResilienceError('not_found', `no pinned MCP tool '${tool}'`);
    return pin;
  }

  /** One decision about `seen`: the config's pin, else the store's; the latest started wins. */
  private async decide(pin: ToolPin, seen: PinRecord, approvedHere = false): Promise<void> {
    const sequence = ++pin.sequence;
    let outcome: Outcome;
    let approvedSha256: string | undefined;
    try {
      ({ outcome, approvedSha256 } = await this.verdict(pin, seen));
    } catch {
      // The store cannot be asked: what this replica already knows decides, and it asks again.
      approvedSha256 = pin.approvedSha256;
      outcome = approvedSha256 === undefined ? 'unchecked' : approvedSha256 === seen.sha256 ? 'same' : 'changed';
    }
    if (sequence !== pin.sequence || this.closed) return;
    this.settle(pin, seen, outcome, approvedSha256, approvedHere);
  }

  private async verdict(pin: ToolPin, seen: PinRecord): Promise<{ outcome: Outcome; approvedSha256: string }> {
    const configPin = pin.settings.configPin;
    if (configPin !== undefined) {
      return { outcome: configPin === seen.sha256 ? 'same' : 'changed', approvedSha256: configPin };
    }
    const verdict = await this.store.see(pin.tool, seen);
    return { outcome: verdict.outcome, approvedSha256: verdict.approved.sha256 };
  }

  private settle(
    pin: ToolPin,
    seen: PinRecord,
    outcome: Outcome,
    approvedSha256: string | undefined,
    approvedHere: boolean,
  ): void {
    const wasServed = pin.served;
    const before = pin.state;
    pin.approvedSha256 = approvedSha256;
    if (outcome === 'unchecked') {
      pin.state = 'unchecked';
      if (before !== 'unchecked') this.emit(pin, 'unchecked', seen.sha256);
    } else if (outcome === 'changed') {
      pin.state = 'changed';
      if (pin.reported !== seen.sha256) {
        pin.reported = seen.sha256;
        this.emit(pin, 'changed', seen.sha256);
      }
    } else {
      const wasReported = pin.reported !== undefined;
      pin.state = 'approved';
      pin.reported = undefined;
      if (outcome === 'pinned') this.emit(pin, 'pinned', seen.sha256);
      // Only a change that was reported is restored (not one quarantined at once and approved meanwhile).
      else if (before === 'changed' && wasReported && !approvedHere) this.emit(pin, 'restored', seen.sha256);
    }
    if (pin.served !== wasServed) this.servingChanges.emit();
    this.armRefresh();
  }

  /** Asks the store again about one tool, once at a time. */
  private refresh(pin: ToolPin): Promise<void> {
    if (pin.refreshing || !pin.seen || this.closed) return Promise.resolve();
    pin.refreshing = true;
    // decide never rejects: a store that fails is an `unchecked` answer.
    return this.decide(pin, pin.seen).finally(() => {
      pin.refreshing = false;
    });
  }

  /** While a tool is changed or unchecked, asks again every {@link PIN_REFRESH_MS}. */
  private armRefresh(): void {
    if (this.timer !== undefined || this.closed) return;
    if (!this.all().some((pin) => pin.state === 'changed' || pin.state === 'unchecked')) return;
    this.timer = this.clock.setTimer(
      () => {
        const asked = this.all()
          .filter((pin) => pin.state === 'changed' || pin.state === 'unchecked')
          .map((pin) => this.refresh(pin));
        // Armed again once the answers are in: the tools still changed then.
        void Promise.allSettled(asked).then(() => {
          this.timer = undefined;
          this.armRefresh();
        });
      },
      PIN_REFRESH_MS,
      { unref: true },
    );
  }

  private emit(pin: ToolPin, kind: ToolPinEvent['kind'], sha256: string): void {
    const mode = pin.settings.mode;
    if (mode === 'off') return;
    this.events.emit({
      kind,
      tool: pin.tool,
      mode,
      sha256,
      approvedSha256: pin.approvedSha256,
      audience: pin.audience,
    });
  }
}

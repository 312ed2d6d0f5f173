import type { Clock } from '../common';
import { type FullBreakerSettings, maxResetTimeoutMs } from './breaker-settings';

/** Tenants refused on their own one breaker keeps at most; beyond, those that never came back are dropped. */
const MAX_TENANT_CIRCUITS = 1_000;
/** Retry-After while a tenant's one probe is out. */
const PROBE_RETRY_AFTER_MS = 1_000;

/** A tenant a breaker refuses on its own, while it lets the others through. */
export interface TenantCircuit {
  /** When it opened (the injected clock). */
  openedAt: number;
  /** Until when it refuses; then one probe goes through. */
  until: number;
  /** Its one probe (the attempt), while it is out. */
  probe: object | undefined;
  /** How long it was refused for last: `resetTimeoutMs`, grown by each failed probe as the breaker's is. */
  openMs: number;
}

/**
 * The tenants one breaker refuses on their own, each with a small circuit of its own: refused
 * for `resetTimeoutMs`, then one probe; a probe that fails refuses it again, for
 * `backoffMultiplier` times longer each time (up to `maxResetTimeoutMs`), as the shared
 * breaker's open time grows; only a real success of its own serves it again; a probe stopped or
 * answered with a 4xx leaves it refused with its probe slot free. Who is refused is for the
 * blame rule (blame-rule.ts) and the half-open suspect (half-open-suspect.ts) to say.
 */
export class TenantCircuits {
  private readonly circuits = new Map<string, TenantCircuit>();
  private readonly opened: Array<(tenant: string) => void> = [];

  constructor(
    private readonly settings: Readonly<FullBreakerSettings>,
    private readonly clock: Clock,
  ) {}

  /** Tenants refused on their own now (or probing), by name. */
  get open(): ReadonlyMap<string, TenantCircuit> {
    return this.circuits;
  }

  /**
   * How long `tenant` is refused for, or undefined when its call may go through. A tenant whose
   * time is up may send one probe: {@link takeProbe} takes it.
   */
  refusalMs(tenant: string): number | undefined {
    if (this.circuits.size === 0) return undefined;
    const circuit = this.circuits.get(tenant);
    if (!circuit) return undefined;
    const leftMs = circuit.until - this.clock.now();
    if (leftMs > 0) return Math.ceil(leftMs);
    return circuit.probe !== undefined ? PROBE_RETRY_AFTER_MS : undefined;
  }

  /** `attempt` of `tenant` goes through: if its own circuit's time is up, it is its probe. */
  takeProbe(tenant: string, attempt: object): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit && circuit.until <= this.clock.now()) circuit.probe = attempt;
  }

  /** Whether `tenant` is refused on its own with its probe out. */
  probing(tenant: string): boolean {
    return this.circuits.size !== 0 && this.circuits.get(tenant)?.probe !== undefined;
  }

  /** Frees `tenant`'s probe slot if `attempt` was its probe: it stays refused, and its next call probes. */
  endProbe(tenant: string, attempt: object): void {
    const circuit = this.circuits.size === 0 ? undefined : this.circuits.get(tenant);
    if (circuit?.probe === attempt) circuit.probe = undefined;
  }

  /** Refuses `tenant` on its own from now; for longer than last time when its probe failed. */
  refuse(tenant: string, probeFailed: boolean): void {
    const now = this.clock.now();
    if (this.circuits.size >= MAX_TENANT_CIRCUITS) {
      // Tenants that never came back for their probe.
      for (const [name, circuit] of this.circuits)
        if (circuit.probe === undefined && circuit.until <= now) this.circuits.delete(name);
    }
    const known = this.circuits.get(tenant);
    const { resetTimeoutMs, backoffMultiplier } = this.settings;
    const openMs =
      known && probeFailed
        ? Math.min(known.openMs * backoffMultiplier, maxResetTimeoutMs(this.settings))
        : resetTimeoutMs;
    this.circuits.set(tenant, { openedAt: known?.openedAt ?? now, until: now + openMs, probe: undefined, openMs });
    if (!known) for (const listener of this.opened) listener(tenant);
  }

  /** Serves `tenant` like everyone again. */
  close(tenant: string): void {
    this.circuits.delete(tenant);
  }

  /** Calls `listener` with each tenant refused on its own; returns a function that removes it. */
  onOpen(listener: (tenant: string) => void): () => void {
    this.opened.push(listener);
    return () => {
      const index = this.opened.indexOf(listener);
      if (index !== -1) this.opened.splice(index, 1);
    };
  }

  clear(): void {
    this.circuits.clear();
  }
}

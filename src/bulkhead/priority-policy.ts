import { ResilienceError } from '../common';
import { isPriorityClass, type PriorityClass, rankOf } from './priority';

/** Who may ask for which class with `X-Bulkhead-Priority` (the `priority` section of the config file). */
export interface PriorityOptions {
  /** The highest class a caller may ask for, unless its tenant's own says otherwise. @default 'standard' */
  readonly ceiling?: PriorityClass;
  /** A tenant's own ceiling, in place of `ceiling`. */
  readonly tenants?: Readonly<Record<string, PriorityClass>>;
}

/** The header a caller names its call's class with. */
export const PRIORITY_HEADER = 'x-bulkhead-priority';

/**
 * A call's priority class: what its tool or route sets by default, or what its caller asks for
 * with `X-Bulkhead-Priority`, held to the tenant's ceiling. A caller may always ask for less; it
 * is never given more than its ceiling, however it asks (a class past it is lowered to it, as a
 * rate limit would be held to its bound); the ceiling is the operator's, never the caller's.
 */
export class PriorityPolicy {
  private readonly ceiling: PriorityClass;
  private readonly byTenant: ReadonlyMap<string, PriorityClass>;

  constructor(options: PriorityOptions = {}) {
    this.ceiling = options.ceiling ?? 'standard';
    this.byTenant = new Map(Object.entries(options.tenants ?? {}));
  }

  /** The class of a call by `tenant` whose default is `byDefault`, given the header's value (if sent). */
  classOf(byDefault: PriorityClass, header: string | string[] | undefined, tenant: string): PriorityClass {
    const asked = askedPriorityOf(header);
    if (asked === undefined) return byDefault;
    const ceiling = this.byTenant.get(tenant) ?? this.ceiling;
    return rankOf(asked) < rankOf(ceiling) ? ceiling : asked;
  }
}

/** `X-Bulkhead-Priority` as sent: a class's name, or nothing; anything else is the caller's `invalid_request`. */
export function askedPriorityOf(header: unknown): PriorityClass | undefined {
  if (header === undefined || isPriorityClass(header)) return header;
  throw new ResilienceError('invalid_request', 'X-Bulkhead-Priority must be critical, standard or sheddable');
}

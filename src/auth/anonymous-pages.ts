import { OriginPolicy, ResilienceError } from '../common';
import type { PlatformRequest } from '../common/nest';

/**
 * Which web pages may call as `anonymous`: with `auth.allowAnonymous`, a route needs no key, so a
 * page can call it too, a DNS-rebinding page included (its name resolved to the service's address,
 * the browser sees the request as same-origin and sends no preflight). Such a caller is refused
 * unless its page is a loopback one, listed in `auth.allowedOrigins`, or the service's own on a
 * host listed in `auth.allowedHosts` ({@link OriginPolicy}, the rule `/mcp` keeps with its own
 * lists). A caller with a key is never asked: no page can attach one without the user's help.
 */
export class AnonymousPages {
  private readonly policy: OriginPolicy;

  constructor(options: { allowedOrigins?: readonly string[]; allowedHosts?: readonly string[] }) {
    this.policy = new OriginPolicy({
      allowedOrigins: options.allowedOrigins ?? [],
      allowedHosts: options.allowedHosts ?? [],
    });
  }

  /** Throws `403 invalid_request` for an anonymous call from a page the policy refuses. */
  check(request: PlatformRequest): void {
    const refusal = this.policy.refusal(request.headers);
    if (refusal !== undefined) throw new ResilienceError('invalid_request', refusal, { status: 403 });
  }
}

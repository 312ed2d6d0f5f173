import type { Viewer } from '../audience';
import { ANONYMOUS_TENANT } from '../tenant';
import { existingCallState } from './call-state';

/**
 * Who reads shared state on this request, as the containment guard routed it. A request it did
 * not route (an app without the guard) reads as `anonymous`, contained: the narrowest view.
 */
export function requestViewer(request: object): Viewer {
  const state = existingCallState(request);
  return { tenant: state?.tenant ?? ANONYMOUS_TENANT, contained: state?.contained ?? true };
}

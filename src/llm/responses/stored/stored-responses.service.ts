import { Inject, Injectable, Logger } from '@nestjs/common';
import { type Awaitable, isPromiseLike, isResilienceError, ResilienceError } from '../../../common';
import { LLM_MODULE_OPTIONS, type LlmModuleOptions } from '../../llm.module-definition';
import { LlmOutcomes } from '../../llm-outcomes';
import type { StoredResponsesConfig } from '../../llm.options';
import type { OutputItem, ResponsesItem, ResponsesRequest } from '../../wire';
import { hasReferences, inputItems, type ResolvedResponsesRequest, resolveReferences } from './response-references';
import { StoredResponsesStore } from './stored-responses.store';

/** What a service that keeps nothing says to a request that names a kept response or item. */
const KEEPS_NONE =
  'this service keeps no responses (llm.responses.stored.enabled is false): send the whole conversation in input, with store false';

/**
 * The responses `/v1/responses` keeps (llm.responses.stored), as its controller uses them:
 * which request's answer is kept, its references resolved before anything else reads the
 * request, and its answer kept before it goes out, so that the client's next request finds it
 * on any replica. A failed read fails its request (`unavailable`); a failed write costs only
 * the keeping: logged without content, counted, and the answer goes out.
 */
@Injectable()
export class StoredResponses {
  private readonly settings: StoredResponsesConfig;
  private readonly logger = new Logger('Bulkhead');

  constructor(
    @Inject(StoredResponsesStore) private readonly store: StoredResponsesStore,
    @Inject(LLM_MODULE_OPTIONS) options: LlmModuleOptions,
    private readonly outcomes: LlmOutcomes,
  ) {
    this.settings = options.llm.responses.stored;
  }

  /**
   * `request` as the model is to see it, with `store` saying whether its answer will be kept
   * (OpenAI's default, absent, is true). Reads the store only when the request names something.
   */
  resolve(tenant: string, request: ResponsesRequest): Awaitable<ResolvedResponsesRequest> {
    const store = this.settings.enabled && request.store !== false;
    if (!hasReferences(request)) return { ...(request as ResolvedResponsesRequest), store };
    if (!this.settings.enabled) {
      const field = request.previous_response_id != null ? 'previous_response_id' : 'input';
      throw new ResilienceError('invalid_request', `${field}: ${KEEPS_NONE}`);
    }
    return resolveReferences(request, tenant, this.store).then(
      (resolved) => ({ ...resolved, store }),
      (error: unknown) => {
        if (isResilienceError(error) && error.kind === 'unavailable') {
          this.outcomes.storedResponseFailed({ operation: 'read' });
          this.logger.warn(`the store of kept responses failed a read: ${nameOf(error.cause)}`);
        }
        throw error;
      },
    );
  }

  /**
   * Keeps the answer `id` of `request` (resolved) when its `store` says so; settles once the
   * store has it, or has failed (never rejects), with whether it is kept: the caller sends the
   * answer after, its `store` false if it was to be kept and is not.
   */
  keep(
    tenant: string,
    request: ResolvedResponsesRequest,
    id: string,
    output: readonly OutputItem[],
  ): Awaitable<boolean> {
    if (request.store !== true) return false;
    const response = { id, input: inputItems(request.input), output: output as unknown as ResponsesItem[] };
    try {
      const keeping = this.store.keep(tenant, response, this.settings.ttlMs);
      if (!isPromiseLike(keeping)) return this.kept(keeping);
      return Promise.resolve(keeping).then(
        (kept) => this.kept(kept),
        (error: unknown) => this.writeFailed(error),
      );
    } catch (error) {
      return this.writeFailed(error);
    }
  }

  private kept(kept: boolean): boolean {
    if (kept) return true;
    // Only a conversation near the largest context windows gets here; its next request will not find it.
    this.outcomes.storedResponseFailed({ operation: 'too_large' });
    this.logger.warn('a response larger than llm.responses.stored.maxResponseBytes went out unkept');
    return false;
  }

  private writeFailed(error: unknown): false {
    this.outcomes.storedResponseFailed({ operation: 'write' });
    // Its name only: the error of a failed write may quote the command, and so the answer.
    this.logger.warn(`the store of kept responses failed a write; the answer went out unkept: ${nameOf(error)}`);
    return false;
  }
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

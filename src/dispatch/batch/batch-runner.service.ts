import { Injectable, Logger } from '@nestjs/common';
import {
  type ErrorEnvelope,
  asResilienceError,
  type LazyAbortController,
  resolveCallId,
  toEnvelope,
  wasReported,
} from '../../common';
import { logIfUnexpected, logRefusal } from '../../common/nest';
import type { PriorityClass } from '../../bulkhead';
import type { PoolName } from '../../containment';
import type { ToolDefinition } from '../tool';
import { CallPipeline, type ToolCallSuccess } from '../call-pipeline.service';
import { ToolRegistry } from '../tool-registry.service';
import { type BatchRequest, parseBatchEntry, parseBatchField } from './batch-request';
import { boundedMap } from './bounded-map';

/** Who sends the batch: every call in it runs as this tenant and stops with this abort. */
export interface BatchCaller {
  tenant: string;
  pool: PoolName;
  contained: boolean;
  abort: LazyAbortController;
  /** An entry's class in its lane (the batch's `X-Bulkhead-Priority`, within the tenant's ceiling). @default the tool's */
  priorityOf?: (tool: ToolDefinition) => PriorityClass;
}

/**
 * `POST /v1/tools/batch`: every call through the whole pipeline, at most `concurrency` at
 * once, each answered in its place with its success body or its own error envelope.
 */
@Injectable()
export class BatchRunner {
  private readonly logger = new Logger('Bulkhead');

  constructor(
    private readonly tools: ToolRegistry,
    private readonly pipeline: CallPipeline,
  ) {}

  async run(batch: BatchRequest, caller: BatchCaller): Promise<{ results: Array<ToolCallSuccess | ErrorEnvelope> }> {
    const results = await boundedMap(batch.calls, batch.concurrency, (entry) => this.runOne(entry, caller));
    return { results };
  }

  private async runOne(raw: unknown, caller: BatchCaller): Promise<ToolCallSuccess | ErrorEnvelope> {
    const labels: { callId?: string; toolId?: string } = {};
    try {
      // In a lone call's order: its shape, its call id, its tool, then its arguments and key.
      const entry = parseBatchEntry(raw);
      const callId = resolveCallId(parseBatchField('callId', entry.callId));
      labels.callId = callId;
      const tool = this.tools.requireFor(entry.toolId, caller.tenant);
      labels.toolId = tool.id;
      return await this.pipeline.invoke({
        tool,
        callId,
        tenant: caller.tenant,
        pool: caller.pool,
        contained: caller.contained,
        abort: caller.abort,
        priority: caller.priorityOf?.(tool),
        arguments: parseBatchField('arguments', entry.arguments) ?? {},
        idempotencyKey: parseBatchField('idempotencyKey', entry.idempotencyKey),
        timeoutMs: tool.timeoutMs,
        queueTtlMs: undefined,
      });
    } catch (error) {
      const failure = asResilienceError(error);
      logIfUnexpected(this.logger, failure);
      // An entry refused before its call began (its shape, call id or tool) has no call line yet.
      if (!wasReported(failure)) {
        const { callId, toolId: tool } = labels;
        logRefusal(this.logger, failure, { callId, tool, tenant: caller.tenant, pool: caller.pool, durationMs: 0 });
      }
      return toEnvelope(failure, labels);
    }
  }
}

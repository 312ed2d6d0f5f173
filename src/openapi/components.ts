import { containmentChangeSchema } from '../containment';
import { batchCallSchema, batchRequestDocumentSchema, invokeBodySchema } from '../dispatch';
import {
  countTokensRequestSchema,
  embeddingsRequestSchema,
  messagesRequestSchema,
  responsesRequestSchema,
} from '../llm';
import { approveBodyObjectSchema } from '../mcp-pinning';
import {
  budgetViewSchema,
  circuitAdminAnswerSchema,
  containmentSnapshotSchema,
  mcpToolApprovalSchema,
  mcpToolPinSchema,
} from './schemas/admin.schemas';
import {
  bulkheadAnswerFieldSchema,
  chatCompletionAnswerSchema,
  chatCompletionChunkSchema,
  chatRequestSchema,
} from './schemas/chat.schemas';
import { ALL_ERROR_KINDS, ERROR_DETAILS, errorEnvelopeSchema, KINDS_BY_STATUS } from './schemas/error-envelope.schema';
import {
  circuitSnapshotSchema,
  circuitsAnswerSchema,
  eventsAnswerSchema,
  laneSnapshotSchema,
  lanesAnswerSchema,
  ledgerEventSchema,
} from './schemas/introspection.schemas';
import { mcpMessageSchema } from './schemas/mcp.schemas';
import {
  anthropicErrorSchema,
  embeddingsAnswerSchema,
  messagesAnswerSchema,
  messageTokensCountSchema,
  responseObjectSchema,
} from './schemas/llm-ingress.schemas';
import { modelListSchema, modelSchema } from './schemas/models.schemas';
import { healthAnswerSchema } from './schemas/service.schemas';
import { batchResponseSchema, errorEnvelopeOfAnyKind, toolCallSuccessSchema } from './schemas/tool-call.schemas';

/**
 * The request bodies, by component name: the very schemas the routes validate with, shown as
 * they are read (zod's input side: a field with a default is optional).
 */
export const REQUEST_SCHEMAS = {
  InvokeRequest: invokeBodySchema,
  BatchRequest: batchRequestDocumentSchema,
  BatchCall: batchCallSchema,
  ContainmentChange: containmentChangeSchema,
  McpToolApprovalRequest: approveBodyObjectSchema,
  ChatCompletionRequest: chatRequestSchema,
  MessagesRequest: messagesRequestSchema,
  CountTokensRequest: countTokensRequestSchema,
  ResponsesRequest: responsesRequestSchema,
  EmbeddingsRequest: embeddingsRequestSchema,
  McpMessage: mcpMessageSchema,
};

/** The success bodies, by component name. */
export const RESPONSE_SCHEMAS = {
  ToolCallSuccess: toolCallSuccessSchema,
  BatchResponse: batchResponseSchema,
  ErrorEnvelope: errorEnvelopeOfAnyKind,
  Lanes: lanesAnswerSchema,
  LaneSnapshot: laneSnapshotSchema,
  Circuits: circuitsAnswerSchema,
  CircuitSnapshot: circuitSnapshotSchema,
  CircuitAdminAnswer: circuitAdminAnswerSchema,
  Events: eventsAnswerSchema,
  LedgerEvent: ledgerEventSchema,
  ContainmentSnapshot: containmentSnapshotSchema,
  BudgetView: budgetViewSchema,
  McpToolPin: mcpToolPinSchema,
  McpToolApproval: mcpToolApprovalSchema,
  Health: healthAnswerSchema,
  ChatCompletion: chatCompletionAnswerSchema,
  ChatCompletionChunk: chatCompletionChunkSchema,
  Message: messagesAnswerSchema,
  MessageTokensCount: messageTokensCountSchema,
  Response: responseObjectSchema,
  Embeddings: embeddingsAnswerSchema,
  ModelList: modelListSchema,
  Model: modelSchema,
  BulkheadAnswerField: bulkheadAnswerFieldSchema,
};

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;
export type ResponseSchemaName = keyof typeof RESPONSE_SCHEMAS;

/** `queue_full` → `QueueFullError`. */
export function errorDetailName(kind: string): string {
  return `${kind.replace(/(^|_)([a-z])/g, (_match, _sep, letter: string) => letter.toUpperCase())}Error`;
}

/** `Error503`: the envelope of the kinds a status answers with. */
export function errorStatusName(status: number): string {
  return `Error${status}`;
}

/** The error schemas: each kind's `error` object, and one envelope per status. */
export const ERROR_SCHEMAS = {
  AnthropicError: anthropicErrorSchema,
  ...Object.fromEntries(ALL_ERROR_KINDS.map((kind) => [errorDetailName(kind), ERROR_DETAILS[kind]])),
  ...Object.fromEntries(
    [...KINDS_BY_STATUS].map(([status, kinds]) => [errorStatusName(status), errorEnvelopeSchema(kinds)]),
  ),
};

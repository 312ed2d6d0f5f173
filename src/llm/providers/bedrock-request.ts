import { sign } from 'aws4';
import { messagesPassThrough, nativeBedrockBody } from './messages-pass-through';
import { type AnthropicBody, toAnthropicBody } from './chat-to-messages-request';
import type { AwsSigningMaterial } from './bedrock-credentials';
import type { ProviderAttempt, ProviderTarget } from './llm-provider';
import { endpointUrl } from './provider-exchange';

/** The Messages API version Bedrock takes in the body, in place of Anthropic's header. */
export const BEDROCK_ANTHROPIC_VERSION = 'bedrock-2023-05-31';

/** The SigV4 service name of the Bedrock runtime. */
export const BEDROCK_SIGNING_SERVICE = 'bedrock';

/** Anthropic's Messages body as Bedrock's InvokeModel takes it: no `model` (the path names it). */
export interface BedrockAnthropicBody extends AnthropicBody {
  anthropic_version: string;
}

/**
 * The attempt's request for Bedrock: the client's own body when it came in the Messages API
 * (`anthropic-beta` as the body's `anthropic_beta`), else through the Anthropic translation.
 */
export function toBedrockBody(attempt: ProviderAttempt): BedrockAnthropicBody | Record<string, unknown> {
  const native = messagesPassThrough(attempt);
  if (native) return nativeBedrockBody(attempt, native, BEDROCK_ANTHROPIC_VERSION);
  return { anthropic_version: BEDROCK_ANTHROPIC_VERSION, ...toAnthropicBody(attempt) };
}

/** @default base URL of a `bedrock` target without its own: the region's runtime endpoint. */
export function bedrockBaseUrl(region: string): string {
  // China's partition has its own domain.
  const domain = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://bedrock-runtime.${region}.${domain}`;
}

/** Bedrock's ways to invoke a model: one JSON answer, an event stream of it, or a count of its input. */
export type BedrockInvocation = 'invoke' | 'invoke-with-response-stream' | 'count-tokens';

/** What each invocation answers, as its `accept` header says. */
export const BEDROCK_ACCEPT: Readonly<Record<BedrockInvocation, string>> = {
  invoke: 'application/json',
  'invoke-with-response-stream': 'application/vnd.amazon.eventstream',
  'count-tokens': 'application/json',
};

/**
 * CountTokens' body: the InvokeModel body it counts, as the base64 blob AWS's JSON protocol
 * carries bytes in.
 */
export function bedrockCountTokensBody(invokeBody: object): { input: { invokeModel: { body: string } } } {
  return { input: { invokeModel: { body: Buffer.from(JSON.stringify(invokeBody)).toString('base64') } } };
}

/**
 * `{base}/model/{model id}/invoke` (or `/invoke-with-response-stream`, `/count-tokens`), the id encoded as one
 * path segment: model ids hold `:` (`…-v1:0`) and ARNs `/` (`…:inference-profile/us.anthropic…`).
 */
export function bedrockInvokeUrl(
  target: ProviderTarget,
  region: string,
  invocation: BedrockInvocation = 'invoke',
): string {
  const base = target.baseUrl ?? bedrockBaseUrl(region);
  return endpointUrl(base, `model/${encodeURIComponent(target.model)}/${invocation}`);
}

/**
 * The headers of one InvokeModel POST of `payload` to `url`, signed with SigV4 by aws4: `host`,
 * `content-type`, `accept`, `content-length`, `x-amz-date` (from `wallNowMs`) and, for temporary
 * credentials, `x-amz-security-token` are all under the signature. Every name is lower case, as
 * the pool sends them.
 *
 * @param payload the exact JSON text that will be sent: its SHA-256 is signed
 * @param wallNowMs epoch milliseconds; AWS refuses a signature more than 5 minutes off
 * @param invocation which `accept` to send: the one of the invocation `url` names
 */
export function signedBedrockHeaders(
  url: string,
  payload: string,
  material: AwsSigningMaterial,
  wallNowMs: number,
  invocation: BedrockInvocation = 'invoke',
): Record<string, string> {
  const { host, pathname, search } = new URL(url);
  const headers: Record<string, string> = {
    // Signed as the pool will send it: the URL's host, with its port only when not the default.
    host,
    'content-type': 'application/json',
    accept: BEDROCK_ACCEPT[invocation],
    'x-amz-date': amzDate(wallNowMs),
  };
  if (material.sessionToken) headers['x-amz-security-token'] = material.sessionToken;
  const signed = sign(
    {
      method: 'POST',
      host,
      path: `${pathname}${search}`,
      service: BEDROCK_SIGNING_SERVICE,
      region: material.region,
      headers,
      body: payload,
    },
    // Always given: without them aws4 would read process.env itself.
    {
      accessKeyId: material.accessKeyId,
      secretAccessKey: material.secretAccessKey,
      sessionToken: material.sessionToken,
    },
  );
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers ?? {})) {
    if (value !== undefined) result[name.toLowerCase()] = String(value);
  }
  return result;
}

/** SigV4's timestamp: `YYYYMMDDTHHMMSSZ`, UTC. */
function amzDate(wallNowMs: number): string {
  return new Date(wallNowMs).toISOString().replace(/[:-]|\.\d{3}/g, '');
}

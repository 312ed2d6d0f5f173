import type { Clock } from '../../common';
import type { ChatCompletion } from '../chat.types';
import { fromAnthropicAnswer } from './anthropic-answer';
import { awsSigningMaterial, type Environment } from './bedrock-credentials';
import { bedrockInvokeUrl, signedBedrockHeaders, toBedrockBody } from './bedrock-request';
import type { LlmProvider, ProviderAttempt } from './llm-provider';
import { postJson } from './provider-exchange';

/**
 * Anthropic models on AWS Bedrock (InvokeModel, not streamed): the request through the same
 * translation as the `anthropic` provider, POSTed to `/model/{model id}/invoke` and signed with
 * SigV4; the answer is the Messages API's, translated back the same way. A target's `apiKey` is
 * not used: the keys are AWS's own.
 *
 * Credentials are read from `env` (`process.env` by default) on every request, not copied when
 * the provider is built: a session token rotated by writing it into `process.env` (a refresher in
 * this process) is used from the next request on. Nothing else is watched: a token renewed
 * outside the process (a file, the instance or container metadata endpoints) needs a restart
 * with the new environment. Reading a few variables costs next to nothing beside the request.
 */
export class BedrockProvider implements LlmProvider {
  readonly name = 'bedrock';

  constructor(
    private readonly clock: Clock,
    private readonly env: Environment = process.env,
  ) {}

  async complete(attempt: ProviderAttempt): Promise<ChatCompletion> {
    const { target } = attempt;
    // Before the translation: a target that cannot sign fails whatever the request.
    const material = awsSigningMaterial(target, this.env);
    const body = toBedrockBody(attempt);
    const url = bedrockInvokeUrl(target, material.region);
    // postJson serializes `body` again; JSON.stringify of the same plain object is the same text,
    // so the payload hash signed here is that of the bytes sent.
    const headers = signedBedrockHeaders(url, JSON.stringify(body), material, this.clock.wallNow());
    const answer = await postJson(attempt, url, headers, body, this.clock);
    // Bedrock's answer may leave out `model`: the translation then names the target's model id.
    return fromAnthropicAnswer(target, answer, this.clock.wallNow());
  }
}

import type { Clock } from '../../../common';
import type { EmbedderConfig } from '../../llm.options';
import type { Embedder } from './embedder';
import { HashingEmbedder } from './hashing-embedder';
import { OpenAiEmbedder } from './openai-embedder';

/** The embedder `llm.cache.semantic.embedder` names. */
export function createEmbedder(config: EmbedderConfig, clock: Clock): Embedder {
  switch (config.kind) {
    case 'hashing':
      return new HashingEmbedder(config.dimensions);
    case 'openai':
      return new OpenAiEmbedder(config, clock);
  }
}

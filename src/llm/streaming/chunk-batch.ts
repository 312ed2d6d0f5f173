import type { ChatChunk } from '../chat.types';

/**
 * The chunks of a streamed answer that arrived together (one read of a provider's body), with
 * the event each came in when the route may send that on as it came: its client then gets the
 * whole read in one write, without the chunks being serialised again.
 */
export interface ChunkBatch {
  readonly chunks: ChatChunk[];
  /**
   * Per chunk, its event as the provider sent it, framed (`data: <its JSON text>\n\n`), or
   * undefined where the chunk is not its JSON text as given (a field the provider left out was
   * filled in). Absent when no chunk is (a translated stream).
   */
  readonly wire?: ReadonlyArray<string | undefined>;
}

/** A provider's chunks one batch each: what a stream read chunk by chunk (translated) is made of. */
export async function* chunkBatches(chunks: AsyncIterable<ChatChunk>): AsyncGenerator<ChunkBatch> {
  for await (const chunk of chunks) yield { chunks: [chunk] };
}

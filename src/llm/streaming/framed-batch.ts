import type { ChatChunk } from '../chat.types';
import type { ChunkBatch } from './chunk-batch';

/**
 * What the client gets of one chunk of a provider's stream: nothing (`left_out`), the chunk as
 * the provider sent it (`as_given`), the chunk without its top-level `usage: null`, the only
 * change made to it (`null_usage_left_out`), or the chunk as it is now, serialised again, since
 * something else in it was changed (`changed`).
 */
export type ChunkSending = 'left_out' | 'as_given' | 'null_usage_left_out' | 'changed';

/** The end of a chunk's JSON text whose last field is `usage: null`, framed; as JSON.stringify writes it. */
const NULL_USAGE_END = ',"usage":null}\n\n';

/**
 * A batch as the events its client gets, framed, for one write: each chunk's event as the
 * provider sent it where it was given as its JSON text and nothing in it changed; the others
 * serialised again. `sending` decides, and makes the changes, chunk by chunk.
 */
export function framedBatch(batch: ChunkBatch, sending: (chunk: ChatChunk) => ChunkSending): string {
  const { chunks, wire } = batch;
  let text = '';
  for (let index = 0; index < chunks.length; index++) {
    const chunk = chunks[index]!;
    const how = sending(chunk);
    if (how === 'left_out') continue;
    const given = wire?.[index];
    if (given !== undefined && how === 'as_given') text += given;
    else if (given !== undefined && how === 'null_usage_left_out' && endsInNullUsage(given)) {
      text += `${given.slice(0, -NULL_USAGE_END.length)}}\n\n`;
    } else text += `data: ${JSON.stringify(chunk)}\n\n`;
  }
  return text;
}

/**
 * Whether a chunk's event, whose top-level `usage` is null, ends with that field and holds no
 * other `"usage"`: its last `}` closes the top-level object, so the `"usage":null` just before it
 * is that object's own last field (inside a string a quote is escaped, so `,"usage"` cannot be
 * part of one), and it is the only one (a duplicate key would leave another behind). OpenAI
 * writes it there in every chunk but the usage chunk; anything else is serialised again.
 */
function endsInNullUsage(event: string): boolean {
  if (!event.endsWith(NULL_USAGE_END)) return false;
  const at = event.length - NULL_USAGE_END.length + 1;
  return event.indexOf('"usage"') === at;
}

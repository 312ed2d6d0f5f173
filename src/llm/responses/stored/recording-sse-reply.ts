import type { Awaitable } from '../../../common';
import { isPromiseLike } from '../../../common';
import type { HttpPlatform, PlatformReply } from '../../../common/nest';
import { SseReply } from '../../streaming/sse-reply';
import type { OutputItem } from '../../wire';

/** The closing events of a whole streamed response (its full output, and its usage). */
const WHOLE_ENDINGS = ['event: response.completed\n', 'event: response.incomplete\n'];

/**
 * The SSE reply of a streamed `/v1/responses` answer that is to be kept: it notes each output
 * item as its client gets it done (`response.output_item.done`), and when the stream ends whole
 * (`response.completed` or `.incomplete`, to a client still there) hands that output to `keep`
 * and sends the closing events once it has settled, so the client's next request finds it.
 * A stream cut short, failed, or left by its client keeps nothing.
 */
export class RecordingSseReply extends SseReply {
  private readonly output: OutputItem[] = [];

  constructor(
    platform: HttpPlatform,
    reply: PlatformReply,
    labels: { callId?: string },
    /** Keeps the output; whether it did. */
    private readonly keep: (output: OutputItem[]) => Awaitable<boolean>,
  ) {
    super(platform, reply, labels);
  }

  override writeNamed(name: string, data: object): Promise<void> | undefined {
    if (name === 'response.output_item.done') {
      const { output_index: index, item } = data as { output_index: number; item: OutputItem };
      // A copy: the item is the sink's, which the client got as it is now.
      this.output[index] = structuredClone(item);
    }
    return super.writeNamed(name, data);
  }

  override finish(text: string): void {
    const whole = WHOLE_ENDINGS.some((ending) => text.startsWith(ending)) && !this.clientGone;
    if (!whole) return super.finish(text);
    const keeping = this.keep(this.output.filter((item) => item !== undefined));
    if (isPromiseLike(keeping)) void Promise.resolve(keeping).then((kept) => super.finish(saying(text, kept)));
    else super.finish(saying(text, keeping));
  }
}

/**
 * The closing event `text` with its response's `store` false when it was not kept (over the
 * size bound, a failed write) though it said it would be: the answer says the truth. Rare, so
 * the event is read again only then.
 */
function saying(text: string, kept: boolean): string {
  if (kept) return text;
  const start = text.indexOf('\ndata: ') + '\ndata: '.length;
  const event = JSON.parse(text.slice(start)) as { response?: { store?: unknown } };
  if (event.response?.store !== true) return text;
  event.response.store = false;
  return `${text.slice(0, start)}${JSON.stringify(event)}\n\n`;
}

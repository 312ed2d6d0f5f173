import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { Agent, request } from 'undici';
import { ResilienceError } from '../common';
import { OutboundHttp, type OutboundRequest, type OutboundResponse } from './outbound-http';

/** {@link OutboundHttp} on one keep-alive undici Agent, closed at shutdown after the drain. */
@Injectable()
export class AgentOutboundHttp extends OutboundHttp implements OnApplicationShutdown {
  private readonly agent = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });

  async request(url: string, outbound: OutboundRequest): Promise<OutboundResponse> {
    const response = await request(url, {
      dispatcher: this.agent,
      method: outbound.method,
      headers: outbound.headers,
      body: outbound.body,
      signal: outbound.signal,
    });
    const { statusCode, headers, body } = response;
    if (statusCode < 200 || statusCode >= 300) {
      await body.dump({ limit: 64 * 1024, signal: outbound.signal }).catch(() => undefined);
      return { statusCode, headers, body: undefined };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > outbound.maxResponseBytes) {
        body.destroy();
        throw new ResilienceError('transient', `upstream answer is larger than ${outbound.maxResponseBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    return { statusCode, headers, body: Buffer.concat(chunks, size) };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}

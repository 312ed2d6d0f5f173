import { Agent } from 'undici';
import { type Response, send, type SendOptions } from './http-client';

/**
 * One request on a connection of its own, closed afterwards. For a server that is closing
 * idle keep-alive sockets (a drain): a pooled socket it has just closed would fail the request.
 */
export async function sendOnNewConnection(method: string, url: string, options: SendOptions = {}): Promise<Response> {
  const agent = new Agent();
  try {
    return await send(method, url, { ...options, dispatcher: agent });
  } finally {
    await agent.destroy();
  }
}

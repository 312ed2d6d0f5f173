import { connect, type Socket } from 'node:net';
import { Controller, Get, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { WithoutTenant } from '../../src/common/nest';
import { createTestApp, type TestApp } from '../support/create-app';
import { invoke } from '../support/http-client';

/** What a raw connection got before the server closed it. */
interface Ending {
  text: string;
  /** The server closed the connection (rather than the test giving up on it). */
  closed: boolean;
}

/** A raw TCP connection to the app: the bytes a client sends, as it sends them. */
class RawConnection {
  private readonly socket: Socket;
  private text = '';
  readonly ended: Promise<Ending>;

  constructor(url: string) {
    const { hostname, port } = new URL(url);
    this.socket = connect(Number(port), hostname);
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => {
      this.text += chunk;
    });
    this.ended = new Promise((resolve) => {
      this.socket.on('close', () => resolve({ text: this.text, closed: true }));
      this.socket.on('error', () => undefined);
    });
  }

  write(bytes: string): void {
    this.socket.write(bytes);
  }

  /** The ending, or what came so far if the server has not closed the connection by `ms` (real time). */
  endingWithin(ms: number): Promise<Ending> {
    let timer: NodeJS.Timeout;
    const giveUp = new Promise<Ending>((resolve) => {
      timer = setTimeout(() => resolve({ text: this.text, closed: false }), ms);
    });
    return Promise.race([this.ended, giveUp]).finally(() => {
      clearTimeout(timer);
      this.socket.destroy();
    });
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The head of a POST with a JSON body of `length` bytes, as a client sends it before the body. */
const head = (length: number) =>
  'POST /v1/tools/echo/invoke HTTP/1.1\r\nHost: localhost\r\nconnection: close\r\ncontent-type: application/json\r\n' +
  `content-length: ${length}\r\n\r\n`;

/** Sends a body of SSE events, one every 200 ms, for `ms` (real time): a stream longer than the timeouts. */
@Controller('long')
class LongAnswers {
  @Get('stream')
  @WithoutTenant()
  async stream(@Res() reply: FastifyReply): Promise<void> {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
    for (let event = 0; event < 12; event++) {
      reply.raw.write(`data: ${event}\n\n`);
      await pause(200);
    }
    reply.raw.end('data: [DONE]\n\n');
  }
}

/**
 * Issue 36: bodies never timed out. Fastify's 0 for `requestTimeout` and `connectionTimeout` also
 * turned Node's own request timeout off, so a client that sent its headers and 7 bytes of a
 * 100-byte body held its connection past 330 s without a key; 300 of them took /health/live
 * down. Timeouts here are short (1 s) so that the tests wait little; the bounds they give the
 * server to act are loose on purpose, as the machine may be loaded.
 */
describe('connection limits', () => {
  let current: TestApp | undefined;

  async function app(server: Record<string, number>): Promise<TestApp> {
    current = await createTestApp({
      auth: { allowAnonymous: true },
      server,
      lanes: { general: { concurrency: 4, queueCapacity: 4 } },
      tools: {
        echo: { lane: 'general', kind: 'builtin', builtin: 'echo' },
        wait: { lane: 'general', kind: 'builtin', builtin: 'delay', timeoutMs: 10_000 },
      },
    });
    return current;
  }

  afterEach(async () => {
    await current?.close();
    current = undefined;
  });

  it('answers 408 and closes a connection whose body stalls for connectionTimeoutMs', async () => {
    const { url } = await app({ connectionTimeoutMs: 1_000, requestTimeoutMs: 60_000 });
    const client = new RawConnection(url);

    client.write(head(100) + '{"argum');
    const ending = await client.endingWithin(8_000);

    expect(ending.closed).toBe(true);
    expect(ending.text).toMatch(/^HTTP\/1\.1 408 /);
    expect(ending.text).toContain('"kind":"invalid_request"');
  }, 15_000);

  it('answers 408 and closes a connection whose body trickles on past requestTimeoutMs', async () => {
    const { url } = await app({ connectionTimeoutMs: 60_000, requestTimeoutMs: 1_000 });
    const client = new RawConnection(url);
    client.write(head(1_000));

    // One byte every 100 ms: never silent for long, never done.
    let closed = false;
    void client.ended.then(() => (closed = true));
    for (let byte = 0; byte < 80 && !closed; byte++) {
      client.write(' ');
      await pause(100);
    }
    const ending = await client.endingWithin(1_000);

    expect(ending.closed).toBe(true);
    expect(ending.text).toMatch(/^HTTP\/1\.1 408 /);
  }, 15_000);

  it('serves a slow upload that keeps coming and ends within requestTimeoutMs', async () => {
    const { url } = await app({ connectionTimeoutMs: 1_000, requestTimeoutMs: 10_000 });
    const body = JSON.stringify({ arguments: { note: 'sent in five parts' } });
    const client = new RawConnection(url);

    client.write(head(Buffer.byteLength(body)));
    for (let part = 0; part < 5; part++) {
      await pause(250);
      client.write(body.slice((part * body.length) / 5, ((part + 1) * body.length) / 5));
    }
    const ending = await client.endingWithin(3_000);

    expect(ending.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(ending.text).toContain('"note":"sent in five parts"');
  }, 15_000);

  it('answers a call that works longer than both timeouts without a byte to send', async () => {
    const { url } = await app({ connectionTimeoutMs: 1_000, requestTimeoutMs: 1_000 });

    const answer = await invoke(url, 'wait', { ms: 2_500 });

    expect(answer.status).toBe(200);
  }, 15_000);

  it('streams an answer for longer than both timeouts: they bound receiving the request, not the answer', async () => {
    current = await createTestApp(
      {
        server: { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_000 },
        lanes: { general: { concurrency: 1, queueCapacity: 0 } },
      },
      { imports: [{ module: class LongAnswersModule {}, controllers: [LongAnswers] }] },
    );
    const client = new RawConnection(current.url);

    client.write('GET /long/stream HTTP/1.1\r\nHost: localhost\r\nconnection: close\r\n\r\n');
    const ending = await client.endingWithin(10_000);

    expect(ending.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(ending.text).toContain('data: 11\n\n');
    expect(ending.text).toContain('data: [DONE]');
  }, 15_000);

  it('closes connections past maxConnections as they arrive, and serves again once one closes', async () => {
    const { url } = await app({ maxConnections: 2, connectionTimeoutMs: 60_000 });
    const held = [new RawConnection(url), new RawConnection(url)];
    held[0].write(head(100));
    held[1].write(head(100));
    await pause(200);

    const refused = await new RawConnection(url).endingWithin(5_000);
    expect(refused).toEqual({ text: '', closed: true });

    await held[0].endingWithin(0);
    await pause(200);
    const answer = await invoke(url, 'echo', { again: true });
    expect(answer.status).toBe(200);
    await held[1].endingWithin(0);
  }, 15_000);
});

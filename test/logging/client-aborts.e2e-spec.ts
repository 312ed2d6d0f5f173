import { connect } from 'node:net';
import { createServiceLogger } from '../../src/logging';
import { CapturedLog } from '../support/captured-log';
import { createTestApp, type TestApp } from '../support/create-app';
import { eventually } from '../support/eventually';

describe('a client that leaves while its body is being read', () => {
  let app: TestApp;
  const log = new CapturedLog();

  afterEach(() => app?.close());

  it('is a client that left (info), not a bug answered as internal', async () => {
    app = await createTestApp(
      {
        lanes: { main: { concurrency: 1, queueCapacity: 1 } },
        tools: { echo: { lane: 'main', kind: 'builtin', builtin: 'echo' } },
      },
      { logger: createServiceLogger({ level: 'log', destination: log }) },
    );
    const { port } = new URL(app.url);

    // Half a body of the length announced, then the connection closed.
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      'POST /v1/tools/echo/invoke HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"arguments":',
    );
    await eventually(() => expect(socket.bytesWritten).toBeGreaterThan(0));
    socket.destroy();

    const line = await eventually(() => {
      const found = log.lines.find((entry) => entry.event === 'request' || entry.event === 'call');
      expect(found).toBeDefined();
      return found!;
    });
    expect(line).toMatchObject({ level: 'info', kind: 'stopped' });
    expect(log.lines.filter((entry) => entry.level === 'error' || entry.level === 'warn')).toEqual([]);
    expect(log.text).not.toContain('answered as internal');
  });
});

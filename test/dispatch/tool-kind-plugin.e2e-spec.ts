import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { z } from 'zod';
import { AppModule } from '../../src/app.module';
import { appOptions, configureApp, createAdapter } from '../../src/bootstrap';
import { CLOCK, type Clock, ResilienceError } from '../../src/common';
import { bulkheadConfigOf, parseConfig } from '../../src/config';
import { HttpPools } from '../../src/containment';
import {
  configToolBasics,
  DISPATCH_MODULE_OPTIONS,
  TOOL_KINDS,
  type ToolDefinition,
  type ToolKind,
  type ToolKindContext,
} from '../../src/dispatch';
import { toolKinds } from '../../src/dispatch/tools/tool-kinds';
import { send } from '../support/http-client';

/** A toy kind's entry: `kind: constant` answers `value`, after failing its first `failures` attempts. */
const constantToolSchema = z.strictObject({
  kind: z.literal('constant'),
  lane: z.string(),
  value: z.json(),
  failures: z.int().min(0).default(0),
  timeoutMs: z.int().default(1_000),
  idempotent: z.boolean().default(true),
  containment: z.enum(['allow', 'deny']).default('allow'),
  retry: z.strictObject({ maxAttempts: z.int(), baseDelayMs: z.int(), maxDelayMs: z.int() }).partial().optional(),
});
type ConstantToolConfig = z.output<typeof constantToolSchema>;

/** A kind the service does not have, as a new kind is written: its schema, `build`, and what it holds till `close`. */
class ConstantToolKind implements ToolKind<ConstantToolConfig> {
  readonly kind = 'constant';
  readonly schema = constantToolSchema;
  closed = 0;

  build(id: string, config: ConstantToolConfig, ctx: ToolKindContext): ToolDefinition {
    let failures = config.failures;
    return Object.freeze({
      ...configToolBasics(id, config, ctx),
      validate: () => undefined,
      inputSchema: undefined,
      handler: () => {
        if (failures-- > 0) throw new ResilienceError('transient', `tool '${id}' failed on purpose`);
        return config.value;
      },
    });
  }

  async close(): Promise<void> {
    this.closed++;
  }
}

const DOCUMENT = {
  lanes: { main: { concurrency: 2, queueCapacity: 2 } },
  auth: { allowAnonymous: true },
  tools: { echo: { kind: 'builtin', builtin: 'echo', lane: 'main' } },
};

/**
 * The service with one kind more in its kinds list (the TOOL_KINDS token) and `tools` entries of
 * that kind, handed to the registry as a parsed config would be (the config file's own union
 * does not know the kind: that is the later step of moving each kind's schema beside it).
 */
async function serviceWith(kind: ConstantToolKind, tools: Record<string, unknown>): Promise<NestFastifyApplication> {
  const parsed = parseConfig(DOCUMENT, {});
  if (!parsed.ok) throw new Error(parsed.problems.join('\n'));
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forRoot({ config: bulkheadConfigOf(DOCUMENT, {}), examples: false })],
  })
    .overrideProvider(TOOL_KINDS)
    .useFactory({
      factory: (clock: Clock, pools: HttpPools) => [
        ...toolKinds({ clock, pools, logger: new Logger('Bulkhead') }),
        kind,
      ],
      inject: [CLOCK, HttpPools],
    })
    .overrideProvider(DISPATCH_MODULE_OPTIONS)
    .useValue({ tools: { ...parsed.config.tools, ...tools } })
    .compile();
  const app = moduleRef.createNestApplication<NestFastifyApplication>(createAdapter(parsed.config), appOptions(false));
  configureApp(app);
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  return app;
}

describe('a tool kind added to the kinds list', () => {
  let app: NestFastifyApplication | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function base(): Promise<string> {
    return (await app!.getUrl()).replace('[::1]', '127.0.0.1');
  }

  it('serves its tools through the whole pipeline: the route, the lane, retries and the breaker', async () => {
    const kind = new ConstantToolKind();
    const answer = constantToolSchema.parse({
      kind: 'constant',
      lane: 'main',
      value: { answer: 42 },
      failures: 1,
      retry: { maxAttempts: 2, baseDelayMs: 0, maxDelayMs: 0 },
    });
    app = await serviceWith(kind, { answer });
    const url = await base();

    const response = await send('POST', `${url}/v1/tools/answer/invoke`, { json: { arguments: {} } });
    const circuits = await send('GET', `${url}/v1/circuits`);
    const echoed = await send('POST', `${url}/v1/tools/echo/invoke`, { json: { arguments: { n: 1 } } });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ toolId: 'answer', lane: 'main', result: { answer: 42 }, attempts: 2 });
    expect(circuits.body.circuits.answer).toMatchObject({ state: 'closed' });
    expect(echoed.body).toMatchObject({ result: { n: 1 } });
  });

  it('is closed with the app', async () => {
    const kind = new ConstantToolKind();
    app = await serviceWith(kind, { seven: constantToolSchema.parse({ kind: 'constant', lane: 'main', value: 7 }) });

    await app.close();
    app = undefined;

    expect(kind.closed).toBe(1);
  });

  it('refuses to start with an entry whose kind is in no list', async () => {
    const kind = new ConstantToolKind();

    await expect(serviceWith(kind, { odd: { kind: 'odd', lane: 'main' } })).rejects.toThrow(
      "tool 'odd' is of kind 'odd', which no tool kind builds",
    );
    // The registry ends what the kinds opened when start-up fails (the app's close does it again).
    expect(kind.closed).toBeGreaterThan(0);
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { bulkheadConfig, bulkheadConfigOf, type BulkheadConfigType, ConfigError } from './index';

const LANES = 'lanes:\n  render: { concurrency: 2, queueCapacity: 4 }\n';

describe('the bulkhead config namespace', () => {
  let directory: string;
  const saved = { BULKHEAD_CONFIG: process.env.BULKHEAD_CONFIG, LANE_CAP: process.env.LANE_CAP };

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'bh-config-'));
  });

  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(directory, { recursive: true, force: true });
  });

  function file(text: string): string {
    const path = join(directory, 'bulkhead.yaml');
    writeFileSync(path, text);
    process.env.BULKHEAD_CONFIG = path;
    return path;
  }

  it('loads the file BULKHEAD_CONFIG names into ConfigService under "bulkhead", substituted and validated', async () => {
    file('lanes:\n  render:\n    concurrency: ${LANE_CAP}\n    queueCapacity: 4\n');
    process.env.LANE_CAP = '3';
    const moduleRef = await Test.createTestingModule({
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [bulkheadConfig] })],
    }).compile();

    const config = moduleRef.get(ConfigService).getOrThrow<BulkheadConfigType>('bulkhead');
    const slice = moduleRef.get<BulkheadConfigType>(bulkheadConfig.KEY);

    expect(config.lanes.render).toEqual({ concurrency: 3, queueCapacity: 4, queueTtlMs: 30_000 });
    expect(slice).toBe(config);
    expect(config.server.port).toBe(3000);
    await moduleRef.close();
  });

  it('throws a ConfigError listing every problem of the file at once', () => {
    const path = file(`${LANES}tools:\n  a: { lane: rendr, kind: code }\n  b: { lane: render, kind: http }\n`);

    expect(() => bulkheadConfig()).toThrow(ConfigError);
    try {
      bulkheadConfig();
    } catch (error) {
      expect((error as ConfigError).source).toBe(path);
      expect((error as ConfigError).problems).toEqual([
        'tools.b.url: is required',
        "tools.a.lane: unknown lane 'rendr' (lanes: render)",
      ]);
    }
  });

  it('makes the same namespace from a document', () => {
    const namespace = bulkheadConfigOf({ lanes: { render: { concurrency: 1, queueCapacity: 0 } } }, {});

    expect(namespace.KEY).toBe(bulkheadConfig.KEY);
    expect(namespace().lanes.render.queueCapacity).toBe(0);
    expect(() => bulkheadConfigOf({ lanes: {} }, {})()).toThrow('lanes: must define at least one lane');
  });
});

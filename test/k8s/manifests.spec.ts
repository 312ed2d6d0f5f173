import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { Service } from 'kubernetes-models/v1/Service';
import { parseConfig } from '../../src/config/config.loader';

const ROOT = resolve(__dirname, '../..');
/** The base only: overlays and the dashboards have their own specs and kustomizations. */
const K8S = join(ROOT, 'k8s', 'base');
const KUSTOMIZATION = 'kustomize.config.k8s.io/v1beta1/Kustomization';

/** The kinds the manifests may use; a new kind is added here with its kubernetes-models class. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
};

type Manifest = { file: string; index: number; type: string; object: Record<string, unknown> };

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return yamlFiles(path);
    return /\.ya?ml$/.test(entry.name) ? [path] : [];
  });
}

function loadManifests(): Manifest[] {
  return yamlFiles(K8S).flatMap((path) => {
    const file = relative(ROOT, path);
    return parseAllDocuments(readFileSync(path, 'utf8')).flatMap((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file} document ${index}: ${document.errors[0].message}`);
      const object = document.toJS() as Record<string, unknown> | null;
      if (object === null) return [];
      return [{ file, index, type: `${String(object.apiVersion)}/${String(object.kind)}`, object }];
    });
  });
}

function required<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`missing: ${what}`);
  return value;
}

function named(type: string, name: string): Record<string, unknown> {
  const found = manifests.filter(
    (m) => m.type === type && (m.object.metadata as { name?: string } | undefined)?.name === name,
  );
  if (found.length !== 1) throw new Error(`expected exactly one ${type} named ${name}, found ${found.length}`);
  return found[0].object;
}

/** Seconds a preStop hook waits: the native `sleep` action or an exec of `sleep N`. */
function preStopSeconds(container: IContainer): number {
  const preStop = required(container.lifecycle?.preStop, 'container lifecycle.preStop');
  if (preStop.sleep) return preStop.sleep.seconds;
  const command = required(preStop.exec?.command, 'preStop sleep or exec command').join(' ');
  const match = /(?:^|\s|\/)sleep\s+(\d+(?:\.\d+)?)\s*$/.exec(command);
  return Number(required(match, `a trailing "sleep N" in preStop command "${command}"`)[1]);
}

/** The instructions of the last stage of a Dockerfile, continuation lines joined. */
function finalDockerStage(text: string): { instruction: string; argument: string }[] {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const instructions = lines.map((line) => {
    const [, instruction, argument] = required(/^(\S+)\s*(.*)$/.exec(line), line);
    return { instruction: instruction.toUpperCase(), argument: argument.trim() };
  });
  const lastFrom = instructions.map((item) => item.instruction).lastIndexOf('FROM');
  expect(lastFrom).toBeGreaterThanOrEqual(0);
  return instructions.slice(lastFrom);
}

const manifests = loadManifests();
const deployment = new Deployment(named('apps/v1/Deployment', 'bulkhead') as never);
const service = new Service(named('v1/Service', 'bulkhead') as never);
const configMap = new ConfigMap(named('v1/ConfigMap', 'bulkhead-config') as never);
const podSpec = required(deployment.spec?.template.spec, 'Deployment pod spec');
const container = required(
  podSpec.containers.find((item) => item.name === 'bulkhead'),
  'Deployment container bulkhead',
);
const httpPort = required(
  container.ports?.find((port) => port.name === 'http'),
  'container port named http',
);
const literalEnv = Object.fromEntries(
  (container.env ?? []).flatMap((variable) => (variable.value === undefined ? [] : [[variable.name, variable.value]])),
);
const configPath = required(literalEnv.BULKHEAD_CONFIG, 'BULKHEAD_CONFIG env');
const configText = required(configMap.data?.[basename(configPath)], `ConfigMap key ${basename(configPath)}`);

function embeddedConfig(env: Record<string, string>) {
  const result = parseConfig(parseYaml(configText), env);
  if (!result.ok) throw new Error(`embedded ${basename(configPath)} is invalid:\n${result.problems.join('\n')}`);
  return result.config;
}

describe('k8s base manifests', () => {
  it('finds manifests under k8s/base', () => {
    expect(manifests.map((manifest) => manifest.type)).toEqual(expect.arrayContaining(Object.keys(MODELS)));
  });

  it.each(
    manifests
      .filter((manifest) => manifest.type !== KUSTOMIZATION)
      .map((m) => [`${m.file}#${m.index} ${m.type}`, m] as const),
  )('%s validates against the schema of its kind', (_name, manifest) => {
    const Model = MODELS[manifest.type];
    if (!Model)
      throw new Error(`${manifest.file}: unknown kind ${manifest.type}; add its kubernetes-models class to MODELS`);
    expect(() => new Model(manifest.object as never).validate()).not.toThrow();
  });

  it('lists every manifest in its directory kustomization, and every listed resource exists', () => {
    const kustomizations = manifests.filter((manifest) => manifest.type === KUSTOMIZATION);
    expect(kustomizations.map((k) => k.file)).toEqual([join('k8s', 'base', 'kustomization.yaml')]);
    for (const kustomization of kustomizations) {
      const dir = dirname(kustomization.file);
      const resources = required(
        kustomization.object.resources as string[] | undefined,
        `${kustomization.file} resources`,
      );
      expect(resources.filter((resource) => !existsSync(join(ROOT, dir, resource)))).toEqual([]);
      const siblings = manifests
        .filter((m) => dirname(m.file) === dir && m.type !== KUSTOMIZATION)
        .map((m) => basename(m.file));
      expect([...new Set(siblings)].sort()).toEqual([...resources].sort());
    }
  });

  it('probes liveness on /health/live and readiness on /health/ready through the named container port', () => {
    expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/health/live', port: httpPort.name });
    expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/health/ready', port: httpPort.name });
    if (container.startupProbe)
      expect(container.startupProbe.httpGet).toMatchObject({ path: '/health/live', port: httpPort.name });
  });

  it('routes the Service to the named container port of the Deployment pods', () => {
    const ports = required(service.spec?.ports, 'Service ports');
    expect(ports.map((port) => port.targetPort)).toEqual([httpPort.name]);
    const podLabels = required(deployment.spec?.template.metadata?.labels, 'pod labels');
    expect(podLabels).toMatchObject(required(service.spec?.selector, 'Service selector'));
    expect(podLabels).toMatchObject(required(deployment.spec?.selector.matchLabels, 'Deployment selector'));
  });

  it('listens on all interfaces at the container port', () => {
    const config = embeddedConfig(literalEnv);
    expect(config.server.port).toBe(httpPort.containerPort);
    expect(['0.0.0.0', '::']).toContain(config.server.host);
  });

  it('annotates pods for Prometheus to scrape /metrics on the container port', () => {
    expect(deployment.spec?.template.metadata?.annotations).toMatchObject({
      'prometheus.io/scrape': 'true',
      'prometheus.io/port': String(httpPort.containerPort),
      'prometheus.io/path': '/metrics',
    });
  });

  it('gives the drain time to finish: the grace period exceeds the preStop sleep plus server.shutdownDrainMs', () => {
    const drainSeconds = embeddedConfig(literalEnv).server.shutdownDrainMs / 1000;
    const graceSeconds = required(podSpec.terminationGracePeriodSeconds, 'terminationGracePeriodSeconds');
    expect(preStopSeconds(container)).toBeGreaterThan(0);
    expect(graceSeconds).toBeGreaterThan(preStopSeconds(container) + drainSeconds);
  });

  it('runs as a numeric non-root user with a read-only root filesystem and no privileges', () => {
    const effective = { ...podSpec.securityContext, ...container.securityContext };
    expect(effective.runAsNonRoot).toBe(true);
    expect(effective.runAsUser).toBeGreaterThan(0);
    expect(effective.seccompProfile?.type).toBe('RuntimeDefault');
    expect(container.securityContext).toMatchObject({
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
  });

  it('sets resource requests and limits', () => {
    expect(container.resources?.requests).toEqual(
      expect.objectContaining({ cpu: expect.anything(), memory: expect.anything() }),
    );
    expect(container.resources?.limits).toEqual(expect.objectContaining({ memory: expect.anything() }));
  });

  it('mounts the ConfigMap read-only where BULKHEAD_CONFIG points, and an emptyDir at /tmp', () => {
    const mounts = container.volumeMounts ?? [];
    const configMount = required(
      mounts.find((mount) => mount.mountPath === dirname(configPath)),
      `volume mount at ${dirname(configPath)}`,
    );
    expect(configMount.readOnly).toBe(true);
    const configVolume = podSpec.volumes?.find((volume) => volume.name === configMount.name);
    expect(configVolume?.configMap?.name).toBe(configMap.metadata?.name);
    const tmpMount = required(
      mounts.find((mount) => mount.mountPath === '/tmp'),
      'volume mount at /tmp',
    );
    expect(podSpec.volumes?.find((volume) => volume.name === tmpMount.name)?.emptyDir).toBeDefined();
  });

  it('reads the admin token from the optional Secret bulkhead-admin', () => {
    const variable = container.env?.find((item) => item.name === 'BULKHEAD_ADMIN_TOKEN');
    expect(variable?.valueFrom?.secretKeyRef).toEqual({ name: 'bulkhead-admin', key: 'token', optional: true });
  });

  it('embeds a bulkhead.yaml that passes the config schema with and without the admin token', () => {
    const document = parseYaml(configText) as Record<string, unknown>;
    expect(Object.keys(document.lanes as object).length).toBeGreaterThan(0);
    expect(Object.keys(document.tools as object).length).toBeGreaterThan(0);
    expect(embeddedConfig(literalEnv).auth.adminToken).toBeUndefined();
    const token = 'a-token-of-at-least-16-characters';
    expect(embeddedConfig({ ...literalEnv, BULKHEAD_ADMIN_TOKEN: token }).auth.adminToken).toBe(token);
    expect(embeddedConfig(literalEnv).auth.allowAnonymous).toBe(false);
  });

  it('runs one replica on the memory store, whose budgets and rate limits are per pod', () => {
    expect(deployment.spec?.replicas).toBe(1);
    expect(embeddedConfig(literalEnv).store.kind).toBe('memory');
  });

  it('has no PodDisruptionBudget, which on one replica would either block drains or protect nothing', () => {
    expect(manifests.map((manifest) => manifest.type)).not.toContain('policy/v1/PodDisruptionBudget');
  });
});

describe('Dockerfile', () => {
  const stage = finalDockerStage(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  const last = (instruction: string) => stage.filter((item) => item.instruction === instruction).at(-1)?.argument;

  it('runs the final stage as a non-root USER that the pod can verify as non-root', () => {
    const user = required(last('USER'), 'USER in the final stage').split(':')[0];
    expect(['root', '0']).not.toContain(user);
    // A named USER cannot be checked by runAsNonRoot unless the pod gives a numeric uid.
    if (!/^\d+$/.test(user))
      expect(container.securityContext?.runAsUser ?? podSpec.securityContext?.runAsUser).toBeGreaterThan(0);
  });

  it('starts node with an exec-form CMD so SIGTERM reaches it', () => {
    expect(last('ENTRYPOINT')).toBeUndefined();
    expect(JSON.parse(required(last('CMD'), 'CMD in the final stage'))).toEqual(['node', 'dist/main.js']);
  });

  it('exposes the container port', () => {
    expect(last('EXPOSE')?.split(/\s+/)).toContain(String(httpPort.containerPort));
  });

  it('builds every stage on a maintained Node.js LTS image (22 or 24), named once so a digest pins it everywhere', () => {
    const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const image = required(/^ARG NODE_IMAGE=(\S+)$/m.exec(text), 'ARG NODE_IMAGE=<image>')[1];
    expect(image).toMatch(/^node:(22|24)([.-][\w.-]*)?(@sha256:[0-9a-f]{64})?$/);
    const froms = [...text.matchAll(/^FROM\s+(\S+)/gm)].map((match) => match[1]);
    expect(froms.length).toBeGreaterThan(0);
    expect(froms.every((from) => from === '${NODE_IMAGE}')).toBe(true);
  });
});

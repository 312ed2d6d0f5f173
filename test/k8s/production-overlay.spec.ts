import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { PrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { parseConfig } from '../../src/config/config.loader';
import { METRIC } from '../../src/metrics/metric-names';

const ROOT = resolve(__dirname, '../..');
const OVERLAY = join(ROOT, 'k8s', 'overlays', 'production');
const KUSTOMIZATION = 'kustomize.config.k8s.io/v1beta1/Kustomization';

/** Every kind the overlay (and what it renders) may hold, with the schema that validates it. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'apps/v1/StatefulSet': StatefulSet,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

type Manifest = { file: string; type: string; object: Record<string, unknown> };

function parseManifests(text: string, file: string): Manifest[] {
  return parseAllDocuments(text).flatMap((document, index) => {
    if (document.errors.length > 0) throw new Error(`${file} document ${index}: ${document.errors[0].message}`);
    const object = document.toJS() as Record<string, unknown> | null;
    if (object === null) return [];
    return [{ file, type: `${String(object.apiVersion)}/${String(object.kind)}`, object }];
  });
}

function required<T>(value: T | null | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`missing: ${what}`);
  return value;
}

const files = readdirSync(OVERLAY)
  .filter((name) => /\.ya?ml$/.test(name))
  .sort();
const manifests = files.flatMap((file) => parseManifests(readFileSync(join(OVERLAY, file), 'utf8'), file));

function one<T>(Model: new (data: never) => T, type: string, name: string): T {
  const found = manifests.filter(
    (m) => m.type === type && (m.object.metadata as { name?: string } | undefined)?.name === name,
  );
  if (found.length !== 1) throw new Error(`expected exactly one ${type} named ${name}, found ${found.length}`);
  return new Model(found[0].object as never);
}

const kustomization = required(
  manifests.find((m) => m.type === KUSTOMIZATION),
  'kustomization.yaml',
).object as { resources?: string[]; patches?: { path?: string }[] };
const deployment = one(Deployment, 'apps/v1/Deployment', 'bulkhead');
const configMap = one(ConfigMap, 'v1/ConfigMap', 'bulkhead-config');
const secret = one(Secret, 'v1/Secret', 'bulkhead');
const redis = one(StatefulSet, 'apps/v1/StatefulSet', 'bulkhead-redis');
const redisService = one(Service, 'v1/Service', 'bulkhead-redis');
const hpa = one(HorizontalPodAutoscaler, 'autoscaling/v2/HorizontalPodAutoscaler', 'bulkhead');
const pdb = one(PodDisruptionBudget, 'policy/v1/PodDisruptionBudget', 'bulkhead');
const networkPolicy = one(NetworkPolicy, 'networking.k8s.io/v1/NetworkPolicy', 'bulkhead');
const redisPolicy = one(NetworkPolicy, 'networking.k8s.io/v1/NetworkPolicy', 'bulkhead-redis');
const serviceMonitor = one(ServiceMonitor, 'monitoring.coreos.com/v1/ServiceMonitor', 'bulkhead');
const serverService = one(Service, 'v1/Service', 'bulkhead');
const rule = one(PrometheusRule, 'monitoring.coreos.com/v1/PrometheusRule', 'bulkhead');

const serverLabels = { 'app.kubernetes.io/name': 'bulkhead', 'app.kubernetes.io/component': 'server' };
const container = required(
  deployment.spec?.template.spec?.containers.find((item) => item.name === 'bulkhead'),
  'container bulkhead in deployment-patch.yaml',
);
const configText = required(configMap.data?.['bulkhead.yaml'], 'ConfigMap key bulkhead.yaml');
/** `${VAR}` names the embedded config reads from the environment. */
/** The variables the config reads: its values are substituted, not its comments (which show alternatives). */
const configValues = configText
  .split('\n')
  .filter((line) => !line.trim().startsWith('#'))
  .join('\n');
const configVariables = [...new Set([...configValues.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]))];
const secretValues = { ...secret.stringData };

/** Values a real Secret would hold, for every variable the config reads. */
const DUMMY: Record<string, string> = {
  BULKHEAD_ADMIN_TOKEN: 'a-dummy-admin-token-of-32-chars!',
  REDIS_URL: 'redis://bulkhead-redis:6379/0',
  BULKHEAD_KEY_SHA256_AGENTS: 'a'.repeat(64),
  BULKHEAD_KEY_SHA256_BATCH: 'b'.repeat(64),
};

/** The env a pod gets from the Secret, by variable name, as deployment-patch.yaml wires it. */
function envFromSecret(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    (container.env ?? []).flatMap((variable) => {
      const ref = variable.valueFrom?.secretKeyRef;
      return ref?.name === secret.metadata?.name && ref?.key !== undefined && values[ref.key] !== undefined
        ? [[variable.name, values[ref.key]]]
        : [];
    }),
  );
}

const PROMQL_WORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** Metric names an expression selects: identifiers that are not functions, keywords or labels. */
function promqlMetricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  return [...bare.matchAll(/(?<![\w.:])([a-zA-Z_:][a-zA-Z0-9_:]*)(?![\w:]|\s*\()/g)]
    .map((match) => match[1])
    .filter((word) => !PROMQL_WORDS.has(word.toLowerCase()));
}

const HISTOGRAMS = [METRIC.queueWait, METRIC.callDuration];
const EXPORTED = new Set<string>([
  ...Object.values(METRIC),
  ...HISTOGRAMS.flatMap((name) => ['_bucket', '_sum', '_count'].map((suffix) => name + suffix)),
  'up',
]);
const alerts = (rule.spec?.groups ?? []).flatMap((group) => group.rules ?? []).filter((item) => item.alert);

describe('k8s production overlay', () => {
  it.each(manifests.filter((m) => m.type !== KUSTOMIZATION).map((m) => [`${m.file} ${m.type}`, m] as const))(
    '%s validates against the schema of its kind',
    (_name, manifest) => {
      const Model = MODELS[manifest.type];
      if (!Model) throw new Error(`${manifest.file}: unknown kind ${manifest.type}; add its model to MODELS`);
      expect(() => new Model(manifest.object as never).validate()).not.toThrow();
    },
  );

  it('lists every file of the folder in its kustomization, and every listed file exists', () => {
    const local = (kustomization.resources ?? []).filter((resource) => !resource.startsWith('..'));
    const patches = (kustomization.patches ?? []).map((patch) => required(patch.path, 'patch path'));
    expect([...local, ...patches, 'kustomization.yaml'].sort()).toEqual(files);
    expect(kustomization.resources).toContain('../../base');
    for (const resource of kustomization.resources ?? [])
      expect(existsSync(join(OVERLAY, resource)) ? resource : `${resource} (missing)`).toBe(resource);
  });

  it('embeds a config that parses with the Secret values, on Redis with API keys and no anonymous callers', () => {
    expect(configVariables.filter((name) => DUMMY[name] === undefined)).toEqual([]);
    const result = parseConfig(parseYaml(configText), DUMMY);
    if (!result.ok) throw new Error(`embedded bulkhead.yaml is invalid:\n${result.problems.join('\n')}`);
    expect(result.config.store).toMatchObject({ kind: 'redis', url: DUMMY.REDIS_URL });
    expect(result.config.auth.allowAnonymous).toBe(false);
    expect(result.config.auth.adminToken).toBe(DUMMY.BULKHEAD_ADMIN_TOKEN);
    expect(result.config.auth.apiKeys.map((key) => key.sha256)).toEqual([
      DUMMY.BULKHEAD_KEY_SHA256_AGENTS,
      DUMMY.BULKHEAD_KEY_SHA256_BATCH,
    ]);
    expect(result.config.server.port).toBe(3000);
    // The metrics port the container declares is the one the service listens on.
    expect(container.ports?.find((port) => port.name === 'metrics')?.containerPort).toBe(
      result.config.server.metricsPort,
    );
  });

  it('fills every variable the config reads from a key of the Secret', () => {
    const env = envFromSecret(secretValues);
    expect(configVariables.filter((name) => env[name] === undefined)).toEqual([]);
    expect(envFromSecret(secretValues).REDIS_URL).toMatch(
      new RegExp(`^redis://${redisService.metadata?.name}:${redisService.spec?.ports?.[0]?.port}(/|$)`),
    );
    const admin = container.env?.find((variable) => variable.name === 'BULKHEAD_ADMIN_TOKEN');
    expect(admin?.valueFrom?.secretKeyRef?.optional).toBe(false);
  });

  it('ships placeholders that the config refuses, so an unedited example Secret cannot start pods', () => {
    const result = parseConfig(parseYaml(configText), envFromSecret(secretValues));
    expect(result.ok).toBe(false);
    expect(JSON.stringify(secretValues)).toContain('CHANGE-ME');
  });

  it('runs three replicas, the HPA floor, scaled on CPU', () => {
    expect(deployment.spec?.replicas).toBe(3);
    expect(hpa.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'bulkhead' });
    expect(hpa.spec?.minReplicas).toBe(deployment.spec?.replicas);
    expect(hpa.spec?.maxReplicas).toBeGreaterThan(required(hpa.spec?.minReplicas, 'minReplicas'));
    expect(hpa.spec?.metrics?.map((metric) => metric.resource?.name)).toEqual(['cpu']);
  });

  it('keeps the PodDisruptionBudget satisfiable at any replica count and aimed at the server pods', () => {
    expect(pdb.spec?.maxUnavailable).toBe(1);
    expect(pdb.spec?.minAvailable).toBeUndefined();
    expect(pdb.spec?.selector?.matchLabels).toEqual(serverLabels);
  });

  it('runs a pinned Redis with limits, a volume and a headless Service', () => {
    const redisContainer = required(redis.spec?.template.spec?.containers[0], 'redis container');
    expect(redisContainer.image).toMatch(/^redis:7\.\d+\.\d+-alpine$/);
    expect(redisContainer.resources?.limits).toEqual(
      expect.objectContaining({ cpu: expect.anything(), memory: expect.anything() }),
    );
    expect(redisContainer.args).toEqual(expect.arrayContaining(['--maxmemory-policy', 'noeviction']));
    expect(redisContainer.securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true });
    expect(redis.spec?.serviceName).toBe(redisService.metadata?.name);
    expect(redisService.spec?.clusterIP).toBe('None');
    expect(redis.spec?.template.metadata?.labels).toMatchObject(required(redisService.spec?.selector, 'selector'));
    expect(redis.spec?.template.metadata?.labels?.['app.kubernetes.io/component']).not.toBe('server');
  });

  it('lets the server reach only DNS, Redis and port 443, and be reached from labelled namespaces', () => {
    expect(networkPolicy.spec?.podSelector.matchLabels).toEqual(serverLabels);
    expect(networkPolicy.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    const egress = (networkPolicy.spec?.egress ?? []).flatMap((item) =>
      (item.ports ?? []).map((port) => `${port.port}/${port.protocol}`),
    );
    expect(egress.sort()).toEqual(['443/TCP', '53/TCP', '53/UDP', '6379/TCP']);
    const dns = networkPolicy.spec?.egress?.find((item) => item.ports?.some((port) => port.port === 53));
    expect(dns?.to?.[0]?.podSelector?.matchLabels).toEqual({ 'k8s-app': 'kube-dns' });
    // The ingress controller reaches the API port only, Prometheus the metrics port only.
    const rules = (networkPolicy.spec?.ingress ?? []).map((rule) => [
      (rule.from ?? []).map((peer) => peer.namespaceSelector?.matchLabels),
      rule.ports,
    ]);
    expect(rules).toEqual([
      [[{ 'bulkhead/allow-ingress': 'true' }], [{ port: 'http', protocol: 'TCP' }]],
      [[{ 'bulkhead/allow-scrape': 'true' }], [{ port: 'metrics', protocol: 'TCP' }]],
    ]);
    expect(redisPolicy.spec?.ingress?.[0]?.from).toEqual([{ podSelector: { matchLabels: serverLabels } }]);
    expect(redisPolicy.spec?.egress ?? []).toEqual([]);
  });

  it('scrapes the server Service port named metrics with the ServiceMonitor', () => {
    expect(serviceMonitor.spec.selector.matchLabels).toEqual(serverLabels);
    expect(serviceMonitor.spec.endpoints?.map((endpoint) => [endpoint.port, endpoint.path])).toEqual([
      ['metrics', '/metrics'],
    ]);
    expect(serverService.spec?.ports?.find((port) => port.name === 'metrics')?.targetPort).toBe('metrics');
    expect(deployment.spec?.template.metadata?.annotations?.['prometheus.io/scrape']).toBe('false');
  });

  it('finds metric names in PromQL, and only those', () => {
    expect(
      promqlMetricNames(
        'histogram_quantile(0.95, sum by (lane, le) (rate(a_bucket{x="y"}[5m]))) > 1e3 and on(pod) b offset 5m',
      ),
    ).toEqual(['a_bucket', 'b']);
    expect(promqlMetricNames('absent(up{job="bulkhead"} == 1)')).toEqual(['up']);
  });

  it('alerts only on metrics the service exports, and on each situation an operator must handle', () => {
    for (const alert of alerts)
      expect({
        alert: alert.alert,
        unknown: promqlMetricNames(String(alert.expr)).filter((n) => !EXPORTED.has(n)),
      }).toEqual({
        alert: alert.alert,
        unknown: [],
      });
    const used = new Set(alerts.flatMap((alert) => promqlMetricNames(String(alert.expr))));
    for (const name of [
      METRIC.laneWaiting,
      METRIC.laneCapacity,
      METRIC.admissions,
      `${METRIC.queueWait}_bucket`,
      METRIC.circuitState,
      METRIC.budgetSpent,
      METRIC.rateLimitFailedOpen,
      METRIC.overloadState,
      METRIC.overloadRefusals,
      'up',
    ])
      expect(used).toContain(name);
  });

  it('gives every alert a duration, a severity, a summary and a description saying what to do', () => {
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      expect(alert.for).toMatch(/^\d+[smh]$/);
      expect(['warning', 'critical']).toContain(alert.labels?.severity);
      expect(alert.annotations?.summary?.length).toBeGreaterThan(10);
      expect(alert.annotations?.description?.length).toBeGreaterThan(100);
    }
  });
});

function kubectlPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const kubectl = kubectlPath();
// Without kubectl nothing is rendered; the per-file checks above still run.
const withKubectl = kubectl ? describe : describe.skip;

withKubectl('kubectl kustomize (skipped when kubectl is not installed)', () => {
  const render = (dir: string) =>
    parseManifests(
      execFileSync(required(kubectl, 'kubectl'), ['kustomize', join(ROOT, 'k8s', dir)], { encoding: 'utf8' }),
      dir,
    );

  it.each(['base', join('overlays', 'production')])('renders k8s/%s into valid manifests', (dir) => {
    const rendered = render(dir);
    for (const manifest of rendered) {
      const Model = required(MODELS[manifest.type], `a model for ${manifest.type}`);
      expect(() => new Model(manifest.object as never).validate()).not.toThrow();
    }
  });

  it('renders one replica on the memory store for the base and three on Redis for production', () => {
    const replicas = (dir: string) => {
      const rendered = render(dir).find((m) => m.type === 'apps/v1/Deployment');
      return new Deployment(required(rendered, `${dir} Deployment`).object as never);
    };
    expect(replicas('base').spec?.replicas).toBe(1);
    const production = replicas(join('overlays', 'production'));
    expect(production.spec?.replicas).toBe(3);
    // The patch merges into the base container: its probes, preStop and mounts stay.
    const merged = required(production.spec?.template.spec?.containers[0], 'container');
    expect(merged.readinessProbe?.httpGet?.path).toBe('/health/ready');
    expect(merged.lifecycle?.preStop).toBeDefined();
    expect(merged.env?.map((variable) => variable.name)).toEqual(
      expect.arrayContaining(['BULKHEAD_CONFIG', 'REDIS_URL', 'BULKHEAD_ADMIN_TOKEN']),
    );
    const config = render(join('overlays', 'production')).find(
      (m) => m.type === 'v1/ConfigMap' && (m.object.metadata as { name: string }).name === 'bulkhead-config',
    );
    expect((config?.object.data as Record<string, string>)['bulkhead.yaml']).toContain('kind: redis');
  });
});

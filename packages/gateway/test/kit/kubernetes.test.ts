/**
 * deploy/: every Kubernetes manifest validates against the Kubernetes
 * schemas (kubernetes-models), and the pieces fit together and fit the
 * gateway: the probes hit routes the gateway answers 200, the container
 * arguments are ones `triton-node serve` accepts, the Service selects the
 * Deployment's pods and names its ports, the HPA scales the Deployment on the
 * metric the Prometheus adapter rule defines, that rule reads metrics
 * /metrics exposes, and the grace period covers the drain.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { useServer } from '@triton-node/test-support/helpers.js';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { ConfigMap, Container, PersistentVolumeClaim, Secret, Service } from 'kubernetes-models/v1';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { parseServeArgs } from '../../lib/cli/serve.js';
import { resolveGuard } from '../../lib/guard/config.js';
import { useGateway } from '../helpers.js';

const DEPLOY = fileURLToPath(new URL('../../kit/', import.meta.url));
const KUBERNETES = `${DEPLOY}kubernetes/`;

// Manifests are read as untyped YAML; kubernetes-models validates their shape below.
// biome-ignore lint/suspicious/noExplicitAny: property paths into parsed YAML, checked by the schema tests
type Doc = Record<string, any>;

const manifests: Array<{ file: string; doc: Doc }> = readdirSync(KUBERNETES)
  .filter((f) => f.endsWith('.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(`${KUBERNETES}${file}`, 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0]!.message}`);
      return { file, doc: d.toJS() as Doc };
    }),
  );

const ofKind = (kind: string, name?: string): Doc => {
  const found = manifests.find(
    (m) => m.doc.kind === kind && (name === undefined || m.doc.metadata.name === name),
  );
  if (found === undefined) throw new Error(`no ${kind} ${name ?? ''} in deploy/kubernetes`);
  return found.doc;
};

/** The Deployment's container arguments with its `--config` path replaced by a file holding the ConfigMap's serve.json. */
function withServeConfig<T>(args: string[], use: (args: string[]) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'serve-config-'));
  try {
    const file = join(dir, 'serve.json');
    writeFileSync(file, ofKind('ConfigMap', 'triton-node-serve').data['serve.json']);
    return use(args.map((a) => (a === '/etc/triton-node/serve.json' ? file : a)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The kubernetes-models class of each kind the manifests use. */
const MODELS: Record<string, new (doc: Doc) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/Service': Service,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
};

const server = useServer(['identity_fp32']);
const gw = useGateway(server);

describe('deploy/kubernetes', () => {
  it('holds the manifests the deployment needs', () => {
    expect(manifests.map((m) => m.doc.kind).sort()).toEqual([
      'ConfigMap',
      'ConfigMap',
      'Deployment',
      'HorizontalPodAutoscaler',
      'PersistentVolumeClaim',
      'Secret',
      'Service',
      'ServingRuntime',
    ]);
  });

  it('validates every core manifest against the Kubernetes schemas', () => {
    for (const { file, doc } of manifests) {
      if (doc.kind === 'ServingRuntime') continue;
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${file}: ${doc.apiVersion} ${doc.kind}`).toBeDefined();
      expect(() => new Model!(doc).validate(), file).not.toThrow();
    }
  });

  it('a broken manifest fails the validation (the check is live)', () => {
    const broken = structuredClone(ofKind('Deployment'));
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'eight thousand';
    expect(() => new Deployment(broken).validate()).toThrow();
  });

  it('the KServe ServingRuntime: its required fields, and its containers against the Container schema', () => {
    const runtime = ofKind('ServingRuntime');
    expect(runtime.apiVersion).toBe('serving.kserve.io/v1alpha1');
    expect(runtime.metadata.name).toMatch(/^[a-z0-9-]+$/);
    expect(runtime.spec.supportedModelFormats.length).toBeGreaterThan(0);
    for (const f of runtime.spec.supportedModelFormats) expect(typeof f.name).toBe('string');
    for (const p of runtime.spec.protocolVersions) expect(['v1', 'v2', 'grpc-v1', 'grpc-v2']).toContain(p);
    expect(runtime.spec.containers.length).toBeGreaterThan(0);
    for (const c of runtime.spec.containers) expect(() => new Container(c).validate()).not.toThrow();
    expect(runtime.spec.containers[0].name).toBe('kserve-container');
    const config = parseServeArgs(runtime.spec.containers[0].args);
    expect(config).toMatchObject({ httpPort: 8080, grpcPort: 9000 });
  });

  it('the container arguments are ones triton-node serve accepts, and the grace period covers the drain', () => {
    const deployment = ofKind('Deployment');
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    const config = withServeConfig(container.args as string[], parseServeArgs);
    if (config === 'help') throw new Error('help');
    const ports = Object.fromEntries(container.ports.map((p: Doc) => [p.name, p.containerPort]));
    expect(ports).toEqual({ http: config.httpPort, grpc: config.grpcPort });
    const preStop = Number(container.lifecycle.preStop.exec.command.at(-1));
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(config.drainTimeoutMs + preStop * 1000);
    expect(container.resources.limits['nvidia.com/gpu']).toBe(1);
  });

  it('the guard shares its limits through the Redis of the Secret: the config mounted, the URL from the Secret', () => {
    const pod = ofKind('Deployment').spec.template.spec;
    const container = pod.containers[0];
    const config = withServeConfig(container.args as string[], parseServeArgs);
    if (config === 'help') throw new Error('help');
    const secret = ofKind('Secret', 'triton-node-redis');
    const env = container.env.find((e: Doc) => e.valueFrom?.secretKeyRef?.name === secret.metadata.name);
    expect(Object.keys(secret.stringData)).toContain(env.valueFrom.secretKeyRef.key);
    const guard = resolveGuard(config.gateway.guard, {
      [env.name]: secret.stringData[env.valueFrom.secretKeyRef.key],
    });
    expect(guard.store).toMatchObject({ redis: { url: secret.stringData.url }, fallback: 'local' });
    // The config file is the ConfigMap, mounted where --config names it.
    const mount = container.volumeMounts.find((m: Doc) => m.mountPath === '/etc/triton-node');
    const volume = pod.volumes.find((v: Doc) => v.name === mount.name);
    expect(volume.configMap.name).toBe('triton-node-serve');
    expect(container.args).toContain('/etc/triton-node/serve.json');
    // Without the variable the config is refused, naming it.
    expect(() => resolveGuard(config.gateway.guard, {})).toThrow(
      `the environment variable ${env.name} is not set`,
    );
  });

  it('the probes hit routes the gateway answers 200', async () => {
    const container = ofKind('Deployment').spec.template.spec.containers[0];
    for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const path = container[probe].httpGet.path;
      const res = await request(`${gw().url}${path}`);
      await res.body.dump();
      expect(res.statusCode, `${probe} ${path}`).toBe(200);
    }
  });

  it('the Service selects the Deployment’s pods and targets its ports', () => {
    const deployment = ofKind('Deployment');
    const service = ofKind('Service');
    expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    const names = deployment.spec.template.spec.containers[0].ports.map((p: Doc) => p.name);
    for (const p of service.spec.ports) expect(names).toContain(p.targetPort);
  });

  it('the HPA scales the Deployment on the adapter’s metric, which reads metrics /metrics exposes', async () => {
    const hpa = ofKind('HorizontalPodAutoscaler');
    expect(hpa.spec.scaleTargetRef).toMatchObject({
      kind: 'Deployment',
      name: ofKind('Deployment').metadata.name,
    });
    const adapter = parseYaml(ofKind('ConfigMap', 'prometheus-adapter-triton-node').data['config.yaml']) as {
      rules: Doc[];
    };
    const defined = adapter.rules.map((r) => r.name.as);
    expect(defined).toContain(hpa.spec.metrics[0].pods.metric.name);
    // Load the model's metrics families (they show once a request ran).
    await server()
      .model('identity_fp32')
      .infer({ inputs: { INPUT0: new Float32Array([1]) } });
    const res = await request(`${gw().url}/metrics`);
    const text = await res.body.text();
    for (const rule of adapter.rules) {
      const names = [rule.seriesQuery, rule.metricsQuery].flatMap(
        (q: string) => q.match(/\bnv_[a-z_]+/g) ?? [],
      );
      expect(names.length).toBeGreaterThan(0);
      for (const n of names) expect(text, n).toMatch(new RegExp(`^${n}\\{`, 'm'));
    }
    const pvc = ofKind('PersistentVolumeClaim');
    const volumes = ofKind('Deployment').spec.template.spec.volumes;
    expect(volumes.map((v: Doc) => v.persistentVolumeClaim?.claimName)).toContain(pvc.metadata.name);
  });
});

describe('kit/Dockerfile', () => {
  const text = readFileSync(`${DEPLOY}Dockerfile`, 'utf8');
  const json = (instruction: string) => {
    const line = text.split('\n').find((l) => l.startsWith(`${instruction} `));
    return JSON.parse(line!.slice(instruction.length + 1)) as string[];
  };

  it('installs triton-node and the gateway from the release’s tarballs, without the fake engine', () => {
    expect(text).toMatch(/node scripts\/release\.mjs --dry-run --out \/tmp\/release/);
    expect(text).toMatch(/npm install --omit=dev --omit=optional /);
    expect(text).toMatch(/\/tmp\/release\/triton-node-gateway-\*\.tgz/);
  });

  it('runs triton-node serve on NVIDIA’s Triton container, on the ports the Deployment names', () => {
    expect(text).toMatch(/^FROM nvcr\.io\/nvidia\/tritonserver:\$\{TRITON_VERSION\}-py3$/m);
    expect(text).toMatch(/TRITON_SERVER_LIB=\/opt\/tritonserver\/lib\/libtritonserver\.so/);
    expect(json('ENTRYPOINT')).toEqual([
      'node',
      '/opt/triton-node/node_modules/triton-node/bin/triton-node.js',
      'serve',
    ]);
    const config = parseServeArgs(json('CMD'));
    if (config === 'help') throw new Error('help');
    const exposed = text
      .match(/^EXPOSE (.*)$/m)![1]!
      .split(/\s+/)
      .map(Number);
    expect(exposed).toEqual([config.httpPort, config.grpcPort]);
  });
});

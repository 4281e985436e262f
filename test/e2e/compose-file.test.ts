/**
 * Structure of the container deployment (docker-compose.yml on PostgreSQL, its
 * MongoDB override and the Dockerfile), checked by parsing: no Docker engine needed.
 */
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { ALL_SERVICES, PRODUCTION_LAYOUT, serviceNames } from "../../bin/start";

const ROOT = path.resolve(__dirname, "../..");
/** Services that own data: on the bus and the database. Every service bin/start.ts knows but gateway, status and portal. */
const STORAGE_SERVICES: readonly string[] = ALL_SERVICES.filter((name) => name !== "gateway" && name !== "status" && name !== "portal");
const INFRASTRUCTURE = ["mongo", "nats", "postgres", "prometheus", "grafana"];

type ComposeService = {
  image?: string;
  build?: unknown;
  command?: string | string[];
  environment?: Record<string, unknown> | string[];
  ports?: unknown[];
  container_name?: string;
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
  profiles?: string[];
  deploy?: { replicas?: number };
};
type ComposeFile = { services: Record<string, ComposeService>; volumes?: Record<string, unknown> };

/** Parses like Docker Compose: YAML merge keys, and its `!override` / `!reset` tags. */
function loadCompose(file: string): ComposeFile {
  const doc = YAML.parseDocument(fs.readFileSync(path.join(ROOT, file), "utf8"), {
    merge: true,
    customTags: [
      { tag: "!override", collection: "map", resolve: (v: unknown) => v },
      { tag: "!override", collection: "seq", resolve: (v: unknown) => v },
      { tag: "!reset", collection: "map", resolve: (v: unknown) => v },
      { tag: "!reset", collection: "seq", resolve: (v: unknown) => v },
    ] as never,
  });
  expect(doc.errors.map((e) => e.message)).toEqual([]);
  expect(doc.warnings.map((w) => w.message)).toEqual([]);
  return doc.toJS() as ComposeFile;
}

function env(service: ComposeService): Record<string, string> {
  const e = service.environment ?? {};
  if (Array.isArray(e)) {
    return Object.fromEntries(e.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
  }
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v === null || v === undefined ? "" : String(v)]));
}

function dependsOn(service: ComposeService): Record<string, string | undefined> {
  const d = service.depends_on ?? {};
  if (Array.isArray(d)) return Object.fromEntries(d.map((name) => [name, undefined]));
  return Object.fromEntries(Object.entries(d).map(([name, spec]) => [name, spec?.condition]));
}

function healthcheckText(service: ComposeService): string {
  const test = service.healthcheck?.test;
  return Array.isArray(test) ? test.join(" ") : (test ?? "");
}

const compose = loadCompose("docker-compose.yml");
const appServices = Object.entries(compose.services).filter(([name]) => !INFRASTRUCTURE.includes(name));
/** The services each app container runs, as bin/start.ts reads its SERVICES (which throws on an unknown name). */
const servicesOf = (service: ComposeService) => serviceNames(env(service).SERVICES);
/** The app container that runs a service. */
const containerOf = (serviceName: string) => appServices.find(([, s]) => servicesOf(s).includes(serviceName))!;

describe("docker-compose.yml", () => {
  it("runs the production layout: one container per PRODUCTION_LAYOUT entry with its SERVICES, every service exactly once, as docs/deploy.md says", () => {
    const layout = Object.fromEntries(appServices.map(([name, service]) => [name, servicesOf(service)]));
    expect(layout).toEqual(Object.fromEntries(Object.entries(PRODUCTION_LAYOUT).map(([name, list]) => [name, [...list]])));
    const deployed = Object.values(layout).flat();
    expect([...deployed].sort()).toEqual([...ALL_SERVICES].sort());
    // The deploy docs give the same lines to copy.
    const documented = fs.readFileSync(path.join(ROOT, "docs/deploy.md"), "utf8").match(/SERVICES=[a-z,]+/g) ?? [];
    expect(documented).toEqual(expect.arrayContaining(Object.values(PRODUCTION_LAYOUT).map((list) => `SERVICES=${list.join(",")}`)));
  });

  it("builds every app container from the one image, on NATS and PostgreSQL", () => {
    const images = new Set(appServices.map(([, s]) => s.image));
    expect(images.size).toBe(1);
    for (const [name, service] of appServices) {
      expect({ name, build: service.build }).toEqual({ name, build: "." });
      expect({ name, command: service.command }).toEqual({ name, command: undefined });
      const e = env(service);
      expect({ name, TRANSPORTER: e.TRANSPORTER }).toEqual({ name, TRANSPORTER: "nats://nats:4222" });
      expect({ name, DATABASE_URL: e.DATABASE_URL }).toEqual({ name, DATABASE_URL: expect.stringMatching(/^postgres:\/\/[^@]+@postgres:5432\//) });
    }
  });

  it("passes each service's settings to the container that runs it", () => {
    const [gatewayContainer, gateway] = containerOf("gateway");
    expect({ gatewayContainer, PORT: env(gateway).PORT, ADMIN_TOKEN: env(gateway).ADMIN_TOKEN }).toEqual({ gatewayContainer, PORT: "3000", ADMIN_TOKEN: "${ADMIN_TOKEN:-}" });
    // The generated operator token survives a restart: DATA_DIR (/app/data in the image) on the volume the gateway always had.
    expect((gateway as { volumes?: string[] }).volumes).toEqual(["gateway-data:/app/data"]);
    expect(compose.volumes).toHaveProperty("gateway-data");
    expect(env(containerOf("processor")[1]).PROCESSOR_WEBHOOK_SECRET).toBe("${PROCESSOR_WEBHOOK_SECRET:-}");
    expect(env(containerOf("notifications")[1]).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe("${WEBHOOK_ALLOW_PRIVATE_TARGETS:-}");
  });

  it("runs NATS and PostgreSQL 16, both with healthchecks, and no MongoDB (the tested path is the default)", () => {
    const { nats, postgres } = compose.services;
    expect(nats?.image).toMatch(/^nats:2(\b|[.-])/);
    expect(healthcheckText(nats)).toMatch(/8222/);
    expect(postgres?.image).toMatch(/^postgres:16/);
    expect(healthcheckText(postgres)).toMatch(/pg_isready/);
    for (const infra of [nats, postgres]) expect(infra.healthcheck?.disable).not.toBe(true);
    expect(Object.keys(compose.services)).not.toContain("mongo");
    expect(JSON.stringify(compose)).not.toMatch(/mongo/i);
  });

  it("starts a container only after NATS and, when it runs a service that owns data, PostgreSQL are healthy", () => {
    for (const [name, service] of appServices) {
      const ownsData = servicesOf(service).some((s) => STORAGE_SERVICES.includes(s));
      const expected = ownsData ? { nats: "service_healthy", postgres: "service_healthy" } : { nats: "service_healthy" };
      expect({ name, depends: dependsOn(service) }).toEqual({ name, depends: expected });
    }
  });

  it("publishes a port only for the container with the gateway (and the opt-in Prometheus and Grafana)", () => {
    const publishing = Object.entries(compose.services)
      .filter(([, s]) => (s.ports ?? []).length > 0 && !s.profiles?.length)
      .map(([name]) => name);
    const [gatewayContainer, gateway] = containerOf("gateway");
    expect(publishing).toEqual([gatewayContainer]);
    expect(gateway.ports!.map(String)).toEqual(["${GATEWAY_PORT:-3000}:3000"]);
  });

  it("gives every app container a readiness healthcheck: the gateway's /api/health where it runs, HEALTH_PORT /ready elsewhere", () => {
    const [gatewayContainer] = containerOf("gateway");
    for (const [name, service] of appServices) {
      const e = env(service);
      expect({ name, HEALTH_PORT: e.HEALTH_PORT }).toEqual({ name, HEALTH_PORT: "3001" });
      expect({ name, disabled: service.healthcheck?.disable }).toEqual({ name, disabled: undefined });
      const check = healthcheckText(service);
      if (name === gatewayContainer) expect(check).toMatch(/http:\/\/127\.0\.0\.1:3000\/api\/health\b/);
      else expect({ name, check }).toEqual({ name, check: expect.stringMatching(/http:\/\/127\.0\.0\.1:3001\/ready/) });
    }
  });

  it("turns on JSON logs and Prometheus metrics on :3030 in every app container, and scrapes them all with the metrics profile", () => {
    for (const [name, service] of appServices) {
      const e = env(service);
      expect({ name, METRICS: e.METRICS, METRICS_PORT: e.METRICS_PORT, LOG_FORMAT: e.LOG_FORMAT }).toEqual({
        name,
        METRICS: expect.stringMatching(/^(true|\$\{METRICS:-true\})$/),
        METRICS_PORT: "3030",
        LOG_FORMAT: expect.stringMatching(/^(json|\$\{LOG_FORMAT:-json\})$/),
      });
    }
    const prometheus = compose.services.prometheus;
    expect(prometheus?.profiles).toEqual(["metrics"]);
    const mount = (prometheus as { volumes?: string[] }).volumes?.find((v) => v.endsWith(":/etc/prometheus/prometheus.yml:ro"));
    expect(mount).toBeDefined();
    const config = YAML.parse(fs.readFileSync(path.join(ROOT, mount!.split(":")[0]), "utf8"));
    type ScrapeJob = { dns_sd_configs?: Array<{ names: string[]; port: number }>; relabel_configs?: Array<{ target_label?: string }> };
    const targets = config.scrape_configs.flatMap((job: ScrapeJob) => job.dns_sd_configs ?? []);
    expect(targets.every((t: { port: number }) => t.port === 3030)).toBe(true);
    expect(targets.flatMap((t: { names: string[] }) => t.names).sort()).toEqual(appServices.map(([name]) => name).sort());
    // A container runs several Moleculer services: the container's name must not overwrite the metrics' own `service` label.
    const relabelled = config.scrape_configs.flatMap((job: ScrapeJob) => (job.relabel_configs ?? []).map((r) => r.target_label));
    expect(relabelled).not.toContain("service");

    // Grafana, in the same profile, provisioned with Prometheus and the dashboard (test/http/metrics.test.ts checks its queries).
    const grafana = compose.services.grafana as ComposeService & { volumes?: string[] };
    expect(grafana?.profiles).toEqual(["metrics"]);
    for (const volume of grafana.volumes ?? []) expect(fs.existsSync(path.join(ROOT, volume.split(":")[0]))).toBe(true);
    expect(grafana.volumes).toContain("./deploy/grafana/affiliate-dashboard.json:/var/lib/grafana/dashboards/affiliate-dashboard.json:ro");
  });

  it("lets every app container scale (no container_name, no fixed replicas), and says how", () => {
    for (const [name, service] of appServices) {
      expect({ name, container_name: service.container_name }).toEqual({ name, container_name: undefined });
      expect({ name, replicas: service.deploy?.replicas }).toEqual({ name, replicas: undefined });
    }
    const header = fs.readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8").split(/^name:/m)[0];
    expect(header).toContain("--scale core=2");
    expect(header).toMatch(/edge[\s\S]*load balancer/);
  });
});

describe("docker-compose.mongo.yml", () => {
  const override = loadCompose("docker-compose.mongo.yml");

  it("swaps PostgreSQL for a self-initiating one-node MongoDB replica set in every app container", () => {
    const { mongo } = override.services;
    expect(mongo?.image).toMatch(/^mongo:7/);
    const command = Array.isArray(mongo.command) ? mongo.command.join(" ") : mongo.command;
    expect(command).toMatch(/--replSet rs0/);
    expect(healthcheckText(mongo)).toMatch(/rs\.initiate\(/);
    expect(healthcheckText(mongo)).toMatch(/host: 'mongo:27017'/);
    expect(override.services.postgres?.profiles?.length).toBeGreaterThan(0);
    for (const [name] of appServices) {
      const service = override.services[name] ?? {};
      expect({ name, url: env(service).DATABASE_URL }).toEqual({ name, url: "mongodb://mongo:27017/affiliate?replicaSet=rs0" });
      expect({ name, depends: dependsOn(service) }).toEqual({ name, depends: { nats: "service_healthy", mongo: "service_healthy" } });
    }
    for (const name of Object.keys(override.services)) {
      if (!INFRASTRUCTURE.includes(name)) expect(Object.keys(compose.services)).toContain(name);
    }
  });
});

describe("Dockerfile", () => {
  const dockerfile = fs.readFileSync(path.join(ROOT, "Dockerfile"), "utf8");
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));

  it("builds in one stage and runs the compiled dist/bin/start.js with node on Node 22 in another, with production dependencies only", () => {
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages.map((s) => s.split("\n")[0].trim())).toEqual([expect.stringMatching(/^node:22-slim AS build$/), expect.stringMatching(/^node:22-slim\b/)]);
    const [build, runtime] = stages;
    expect(build).toMatch(/^RUN npm ci\b/m);
    expect(build).toMatch(/^RUN npm run build$/m);
    expect(pkg.scripts.build).toBe("node bin/build.mjs");
    expect(runtime).toMatch(/npm ci --omit=dev\b/);
    expect(runtime).toMatch(/^COPY --from=build \/app\/dist \.\/dist$/m);
    // No sources and no loader in the runtime stage: only package files and dist/ come in.
    expect(runtime.match(/^COPY .*$/gm)).toEqual(["COPY package.json package-lock.json ./", "COPY --from=build /app/dist ./dist"]);
    // The same Node flags as npm run start:prod (the young generation capped: docs/performance.md, "Memory"; AsyncLocalStorage without promise hooks: "Third pass").
    expect(runtime).toMatch(/^CMD \["node", ?"--max-semi-space-size=4", ?"--experimental-async-context-frame", ?"dist\/bin\/start\.js"\]$/m);
    expect(pkg.scripts["start:prod"]).toBe("node --max-semi-space-size=4 --experimental-async-context-frame dist/bin/start.js");
    expect(dockerfile).not.toMatch(/\btsx\b/);
  });

  it("leaves the command to the image in every compose service, so each runs the compiled entry", () => {
    for (const [name, service] of appServices) expect({ name, command: service.command }).toEqual({ name, command: undefined });
    const override = loadCompose("docker-compose.mongo.yml");
    for (const [name, service] of Object.entries(override.services)) {
      if (!INFRASTRUCTURE.includes(name)) expect({ name, command: service.command ?? undefined }).toEqual({ name, command: undefined });
    }
  });

  it("keeps node_modules and local data out of the build context", () => {
    const ignored = fs
      .readFileSync(path.join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(["node_modules", "data"]));
  });
});

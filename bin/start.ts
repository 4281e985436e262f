/**
 * Starts a broker with the services named in SERVICES (comma-separated,
 * default: all). `--repl` opens the operator REPL once started (commands in
 * bin/repl-commands.ts); HEALTH_PORT adds /live and /ready for orchestrators
 * (bin/health-server.ts).
 */
import type { AddressInfo } from "node:net";
import path from "node:path";
import { ServiceBroker, type ServiceSchema } from "moleculer";
import { logFields, logFormatFromEnv } from "../shared/observability";
import type { AdminTokenOrigin } from "../services/gateway.service";
import config from "../moleculer.config";
import { startHealthServer } from "./health-server";
import { replOptions } from "./repl-commands";
import { ALLOW_PRIVATE_TARGETS_ENV, privateTargetsAllowed } from "../services/notifications/webhook-target";

export const ALL_SERVICES = ["gateway", "accounts", "programs", "attribution", "sales", "commissions", "processor", "status", "notifications", "portal", "rewards"] as const;

/**
 * The layout we recommend for production (docs/deploy.md, "Production layout"): `edge` holds every service of the
 * hot paths (click, lead, sale, refund, status), so a request crosses no bus hop: one process per core, replicated
 * behind a load balancer; `core` holds the rest (settings, partners, rewards, Stripe webhooks, emails, the portal),
 * whose answers the edge caches: two processes for availability. The bench measures it beside the fully split layout.
 */
export const PRODUCTION_LAYOUT = {
  edge: ["gateway", "sales", "commissions", "attribution", "status"],
  core: ["accounts", "programs", "rewards", "processor", "notifications", "portal"],
} as const satisfies Record<string, ReadonlyArray<(typeof ALL_SERVICES)[number]>>;

export function serviceNames(list = process.env.SERVICES): string[] {
  const names = list
    ? list
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : [...ALL_SERVICES];
  const unknown = names.filter((n) => !(ALL_SERVICES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`Unknown service(s) in SERVICES: ${unknown.join(", ")}. Known: ${ALL_SERVICES.join(", ")}.`);
  return names;
}

export function loadService(name: string): ServiceSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`../services/${name}.service`).default;
}

/**
 * The few lines a user needs once the system is up: where it answers, where
 * the operator token is (never the token), and what to run next. Only a
 * process with the gateway has something to say. When this process's
 * environment lets webhooks reach private addresses, it says so (the
 * notifications service also warns at start, in whichever process runs it).
 */
export function readyBanner(broker: ServiceBroker): { text: string; fields: Record<string, string> } | null {
  const gateway = broker.getLocalService("gateway") as unknown as { server?: { address(): AddressInfo | string | null }; adminTokenOrigin?: AdminTokenOrigin } | undefined;
  const address = gateway?.server?.address();
  if (!gateway || !address || typeof address === "string") return null;
  const host = ["0.0.0.0", "::", "127.0.0.1", "::1"].includes(address.address) ? "localhost" : address.address.includes(":") ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  const origin = gateway.adminTokenOrigin;
  const token = origin?.source === "file" ? `${origin.generated ? "generated into" : "read from"} ${origin.file}` : "from ADMIN_TOKEN";
  // The CLI finds the server at http://localhost:3000 and the token in ./data unless told otherwise.
  const env = [
    ...(address.port === 3000 ? [] : [`ADMIN_URL=${url}`]),
    ...(origin?.source === "file" && path.dirname(origin.file) !== path.resolve("data") ? [`DATA_DIR=${path.dirname(origin.file)}`] : []),
  ];
  // Run from the build (dist/bin/start.js), the CLI to suggest is the compiled one too.
  const cli = path.extname(__filename) === ".js" ? "npm run -s cli:prod --" : "npm run -s cli --";
  const next = [...env, `${cli} bootstrap`].join(" ");
  const privateWebhooks = privateTargetsAllowed();
  const mail = process.env.MAIL_URL || process.env.SMTP_URL ? null : "no MAIL_URL (or SMTP_URL): emails to partners and sign-in links are written to the log, not sent";
  const text = [
    `Ready: ${url}`,
    `  Operator token: ${token}`,
    `  Next: ${next}   (creates a program, an API key and a partner to try the API with)`,
    `  API reference: ${url}/api/docs`,
    ...(privateWebhooks
      ? [`  Webhooks: private targets allowed (${ALLOW_PRIVATE_TARGETS_ENV}=true): endpoints may be loopback, private and link-local addresses. Development and self-hosted only.`]
      : []),
    ...(mail ? [`  Mail: ${mail}.`] : []),
  ].join("\n");
  return { text, fields: { url, adminToken: token, next, ...(privateWebhooks ? { webhookPrivateTargets: "allowed" } : {}), ...(mail ? { mail } : {}) } };
}

async function main(): Promise<void> {
  const broker = new ServiceBroker({ ...config, replOptions: replOptions() });
  for (const name of serviceNames()) broker.createService(loadService(name));
  if (process.env.HEALTH_PORT) await startHealthServer(broker, Number(process.env.HEALTH_PORT), process.env.HEALTH_HOST || "0.0.0.0");
  await broker.start();
  const banner = readyBanner(broker);
  // JSON lines also carry the parts as fields; text shows the banner alone.
  if (banner) broker.logger.info(banner.text, ...(logFormatFromEnv() === "json" ? [logFields(banner.fields)] : []));
  if (process.argv.includes("--repl")) await broker.repl();
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

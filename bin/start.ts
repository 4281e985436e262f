/**
 * Starts a broker with the services named in SERVICES (comma-separated,
 * default: all). `--repl` opens the operator REPL once started (commands in
 * bin/repl-commands.ts); HEALTH_PORT adds /live and /ready for orchestrators
 * (bin/health-server.ts).
 */
import { ServiceBroker, type ServiceSchema } from "moleculer";
import config from "../moleculer.config";
import { startHealthServer } from "./health-server";
import { replOptions } from "./repl-commands";

export const ALL_SERVICES = ["gateway", "accounts", "programs", "attribution", "sales", "commissions", "processor", "status", "notifications"] as const;

export function serviceNames(list = process.env.SERVICES): string[] {
  const names = list ? list.split(",").map((s) => s.trim()).filter(Boolean) : [...ALL_SERVICES];
  const unknown = names.filter((n) => !(ALL_SERVICES as readonly string[]).includes(n));
  if (unknown.length) throw new Error(`Unknown service(s) in SERVICES: ${unknown.join(", ")}. Known: ${ALL_SERVICES.join(", ")}.`);
  return names;
}

export function loadService(name: string): ServiceSchema {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(`../services/${name}.service`).default;
}

async function main(): Promise<void> {
  const broker = new ServiceBroker({ ...config, replOptions: replOptions() });
  for (const name of serviceNames()) broker.createService(loadService(name));
  if (process.env.HEALTH_PORT) await startHealthServer(broker, Number(process.env.HEALTH_PORT), process.env.HEALTH_HOST || "0.0.0.0");
  await broker.start();
  if (process.argv.includes("--repl")) await broker.repl();
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}

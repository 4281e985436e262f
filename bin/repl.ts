/**
 * `npm run repl`: an operator REPL that joins a running system as one more
 * node on its transporter, with no services of its own. It sees every node
 * of the namespace and calls their actions like any other node.
 *
 *   TRANSPORTER=nats://127.0.0.1:4222 npm run repl
 *   affiliate $ sale 1 order-1001
 *
 * For the embedded system (one process, no NATS) use `npm start -- --repl`.
 */
import os from "node:os";
import { ServiceBroker } from "moleculer";
import config from "../moleculer.config";
import { loggerFromEnv } from "../shared/observability";
import { replOptions } from "./repl-commands";

async function main(): Promise<void> {
  if (!config.transporter) {
    console.error(
      "npm run repl joins a running system over its transporter: set TRANSPORTER (e.g. TRANSPORTER=nats://127.0.0.1:4222, and NAMESPACE if it is not 'affiliate').\n" +
        "For a REPL on the embedded system, run `npm start -- --repl` instead.",
    );
    process.exit(2);
  }
  // Quiet by default: the broker's start-up lines would bury the prompt.
  const logLevel = process.env.LOG_LEVEL ?? "warn";
  const broker = new ServiceBroker({
    ...config,
    nodeID: process.env.NODE_ID || `repl-${os.hostname()}-${process.pid}`,
    logger: loggerFromEnv({ ...process.env, LOG_LEVEL: logLevel }),
    logLevel: logLevel as "warn",
    // An operator's node: it serves nothing, exposes no metrics port and exports no traces.
    metrics: { enabled: false },
    tracing: { enabled: false },
    replOptions: replOptions(),
  });
  await broker.start();
  console.log(`Joined namespace '${broker.namespace}' on ${String(config.transporter)} as node '${broker.nodeID}'. Type 'help' for commands.`);
  broker.repl();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

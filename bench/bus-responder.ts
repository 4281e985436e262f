/**
 * The answering side of the bus benchmark (bench/run.ts is the caller), in its
 * own process like a service node: a Moleculer broker on production's NATS
 * transporter (shared/nats-transporter.ts) with an `echo` action (the broker
 * settings of moleculer.config.ts, logging off), and a raw NATS subscription
 * that answers the same JSON.
 *
 * Environment: NATS_URL, NAMESPACE.
 */
import { connect, StringCodec } from "nats";
import { ServiceBroker } from "moleculer";
import config from "../moleculer.config";
import { transporterFromEnv } from "../shared/nats-transporter";

async function main(): Promise<void> {
  const natsUrl = process.env.NATS_URL!;
  const broker = new ServiceBroker({
    ...config,
    namespace: process.env.NAMESPACE,
    nodeID: `bench-responder-${process.pid}`,
    transporter: transporterFromEnv(natsUrl),
    logger: false,
  });
  broker.createService({
    name: "bench",
    actions: {
      echo: {
        handler(ctx) {
          return ctx.params;
        },
      },
    },
  });
  await broker.start();

  // Raw NATS request-reply: decode the JSON, answer it encoded again (what a hand-written service would do).
  const nc = await connect({ servers: natsUrl });
  const sc = StringCodec();
  // A callback subscription, as Moleculer's NATS transporter uses.
  nc.subscribe(`${process.env.NAMESPACE}.raw.echo`, {
    callback: (err, msg) => {
      if (!err) msg.respond(sc.encode(JSON.stringify(JSON.parse(sc.decode(msg.data)))));
    },
  });
  await nc.flush();
  console.log("READY");

  const stop = async () => {
    await nc.drain().catch(() => undefined);
    await broker.stop();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

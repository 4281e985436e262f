import { spawnSync } from "node:child_process";
import { ensureServerBinaries, startServers } from "../lib/servers";
(async () => {
  const s = await startServers(ensureServerBinaries(console.log), console.log);
  const r = spawnSync("npm", ["test", "--", ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, NATS_URL: s.natsUrl, TEST_POSTGRES_URL: s.pgUrl("postgres") } });
  await s.stop();
  process.exit(r.status ?? 1);
})();

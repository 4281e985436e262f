import { PgliteDatabase } from "../../shared/storage/sql";
(async () => {
  const rss = () => Math.round(process.memoryUsage().rss / 1048576);
  const db = await PgliteDatabase.open(process.argv[2] === "mem" ? undefined : process.argv[2]);
  console.log("open", rss(), await db.query("SHOW shared_buffers"));
  global.gc?.(); await new Promise((r) => setTimeout(r, 300)); global.gc?.();
  console.log("gc", rss());
  await db.close(); process.exit(0);
})();

import { PgliteDatabase } from "../../shared/storage/sql";
(async () => {
  const rss = () => Math.round(process.memoryUsage().rss / 1048576);
  const gc = async () => { global.gc?.(); await new Promise((r) => setTimeout(r, 300)); global.gc?.(); };
  let db = await PgliteDatabase.open(process.argv[2]);
  await gc(); console.log("fresh", rss(), process.memoryUsage().external >> 20);
  await db.close(); await gc(); console.log("closed", rss(), process.memoryUsage().external >> 20);
  db = await PgliteDatabase.open(process.argv[2]);
  await gc(); console.log("reopened", rss(), process.memoryUsage().external >> 20);
  await db.close(); process.exit(0);
})();

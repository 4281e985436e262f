import { PgliteDatabase } from "../../shared/storage/sql";
(async () => {
  const mu = () => { const m = process.memoryUsage(); return `rss ${m.rss >> 20} heap ${m.heapTotal >> 20}/${m.heapUsed >> 20} ext ${m.external >> 20} ab ${m.arrayBuffers >> 20}`; };
  const db = await PgliteDatabase.open(process.argv[2]);
  await db.query("CREATE TABLE IF NOT EXISTS t (id serial primary key, v text, n bigint, at timestamptz default now())");
  console.log("open", mu());
  for (let round = 0; round < 6; round++) {
    for (let i = 0; i < 3000; i++) {
      await db.transaction(async (q) => { await q.query("INSERT INTO t (v, n) VALUES ($1, $2) RETURNING *", ["x".repeat(100), i]); await q.query("SELECT * FROM t WHERE id = $1 FOR UPDATE", [i]); });
      await db.query("SELECT * FROM t ORDER BY id DESC LIMIT 10");
    }
    console.log("round", round, mu());
  }
  await db.close(); process.exit(0);
})();

/**
 * Run as its own process by test/http/database-outage.test.ts: the
 * PostgreSQL backend of an open transaction is terminated
 * (`pg_terminate_backend` from a second connection), once while a query of
 * the transaction runs and once while the transaction sits idle between two
 * queries. Each transaction must fail cleanly, the process must live on, and
 * the next transaction must work. Prints one JSON line with what happened;
 * an unhandled 'error' event would end the process with exit code 1 first.
 */
import { Client } from "pg";
import { isStorageUnavailable } from "../../shared/storage/errors";
import { PostgresDatabase } from "../../shared/storage/sql";

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL!;
  // One pooled connection: the next transaction has to replace the broken client.
  const db = new PostgresDatabase(url, 1);
  const killer = new Client({ connectionString: url });
  await killer.connect();
  const terminate = (pid: number) => killer.query("SELECT pg_terminate_backend($1)", [pid]);
  const outcome = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
      return { failed: false };
    } catch (err) {
      return { failed: true, unavailable: isStorageUnavailable(err), message: (err as Error).message };
    }
  };

  const duringQuery = await outcome(() =>
    db.transaction(async (tx) => {
      const [{ pid }] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await Promise.all([tx.query("SELECT pg_sleep(5)"), new Promise((r) => setTimeout(r, 200)).then(() => terminate(pid))]);
    }),
  );
  const betweenQueries = await outcome(() =>
    db.transaction(async (tx) => {
      const [{ pid }] = await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await terminate(pid);
      // Long enough for the client to read the server's FATAL and the closed socket.
      await new Promise((r) => setTimeout(r, 300));
      await tx.query("SELECT 1");
    }),
  );
  const [next] = await db.transaction((tx) => tx.query<{ answer: number }>("SELECT 42 AS answer"));
  console.log(JSON.stringify({ duringQuery, betweenQueries, next: next.answer }));
  await killer.end();
  await db.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});

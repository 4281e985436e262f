/**
 * A new PGlite data directory is created (initdb) by a short-lived child process before this process opens it
 * (shared/storage/sql.ts; why: docs/performance.md, "Memory and compiled start"). The directory it leaves must be a
 * complete database: opened here, written to, and found again with its rows after a restart.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PgliteDatabase } from "../../shared/storage/sql";

jest.setTimeout(180_000);

describe("PGlite on a new data directory", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pglite-first-open-"));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("creates the database in missing parents, opens it, and keeps what was written across a reopen", async () => {
    const dir = path.join(tmp, "not", "there", "pglite");
    const first = await PgliteDatabase.open(dir);
    expect(fs.existsSync(path.join(dir, "PG_VERSION"))).toBe(true);
    await first.query("CREATE TABLE kept (id INTEGER PRIMARY KEY, amount BIGINT NOT NULL)");
    await first.transaction(async (tx) => {
      await tx.query("INSERT INTO kept (id, amount) VALUES ($1, $2)", [1, 12345]);
    });
    await first.close();

    const again = await PgliteDatabase.open(dir);
    expect(await again.query("SELECT id, amount FROM kept")).toEqual([{ id: 1, amount: 12345 }]);
    await again.close();
  });
});

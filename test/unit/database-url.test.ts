/** DATABASE_URL's forms (shared/storage/database.ts). */
import path from "node:path";
import { describeDatabaseUrl } from "../../shared/storage/database";

test("each adapter's URL; an in-memory PGlite may start from a dump, a folder's may not", () => {
  expect(describeDatabaseUrl("pglite://memory#a")).toEqual({ adapter: "pglite", location: "memory" });
  expect(describeDatabaseUrl("pglite://memory?template=/tmp/schema.tar#b")).toEqual({ adapter: "pglite", location: "memory", template: "/tmp/schema.tar" });
  expect(describeDatabaseUrl("pglite://data/db")).toEqual({ adapter: "pglite", location: path.resolve("data/db") });
  expect(() => describeDatabaseUrl("pglite://data/db?template=/tmp/schema.tar")).toThrow("in-memory database");
  expect(describeDatabaseUrl("postgres://u@h/db").adapter).toBe("postgres");
  expect(() => describeDatabaseUrl("mysql://h/db")).toThrow("is not supported");
});

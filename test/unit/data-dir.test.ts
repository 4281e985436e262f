/**
 * Where the server writes: everything under DATA_DIR (default ./data), the
 * embedded database included; an explicit DATABASE_URL still wins.
 */
import path from "node:path";
import { adminTokenFile, dataDir } from "../../shared/admin-token";
import { databaseUrl } from "../../shared/storage/database";

describe("DATA_DIR", () => {
  const saved = { DATA_DIR: process.env.DATA_DIR, DATABASE_URL: process.env.DATABASE_URL };
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it("defaults to ./data for the token and the embedded database", () => {
    delete process.env.DATA_DIR;
    delete process.env.DATABASE_URL;
    expect(dataDir()).toBe(path.resolve("data"));
    expect(adminTokenFile()).toBe(path.resolve("data", "admin-token"));
    expect(databaseUrl()).toBe(`pglite://${path.resolve("data", "pglite")}`);
  });

  it("moves both, and an empty value is the default", () => {
    delete process.env.DATABASE_URL;
    process.env.DATA_DIR = "/srv/affiliate/state";
    expect(adminTokenFile()).toBe("/srv/affiliate/state/admin-token");
    expect(databaseUrl()).toBe("pglite:///srv/affiliate/state/pglite");
    process.env.DATA_DIR = "";
    expect(dataDir()).toBe(path.resolve("data"));
  });

  it("does not override an explicit DATABASE_URL", () => {
    process.env.DATA_DIR = "/srv/affiliate/state";
    process.env.DATABASE_URL = "postgres://db.internal/affiliate";
    expect(databaseUrl()).toBe("postgres://db.internal/affiliate");
    expect(adminTokenFile()).toBe("/srv/affiliate/state/admin-token");
  });
});

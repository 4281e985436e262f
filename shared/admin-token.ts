import fs from "node:fs";
import path from "node:path";
import { randomToken } from "./secrets";

/** Where everything the server writes goes (the embedded database, the operator token): DATA_DIR, default ./data. */
export function dataDir(): string {
  return path.resolve(process.env.DATA_DIR || "data");
}

export const adminTokenFile = () => path.join(dataDir(), "admin-token");

/** The operator token does everything: one short enough to guess is refused at start. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

function checkedToken(token: string, source: string): string {
  if (token.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new Error(
      `The operator token from ${source} has ${token.length} characters; it needs at least ${MIN_ADMIN_TOKEN_LENGTH}. ` +
        "Use a random one (e.g. `openssl rand -hex 32`), or unset ADMIN_TOKEN to have one generated.",
    );
  }
  return token;
}

/**
 * The operator token for /api/admin: ADMIN_TOKEN when set; otherwise read from
 * the data folder, or generated there on first start (`generated` tells the
 * caller to say where it is); `file` is where it is stored (none for ADMIN_TOKEN).
 */
export function loadAdminToken(): { token: string; generated: boolean; file?: string } {
  if (process.env.ADMIN_TOKEN) return { token: checkedToken(process.env.ADMIN_TOKEN, "ADMIN_TOKEN"), generated: false };
  const file = adminTokenFile();
  if (fs.existsSync(file)) return { token: checkedToken(fs.readFileSync(file, "utf8").trim(), file), generated: false, file };
  const token = `adm_${randomToken(32)}`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: "wx" });
    return { token, generated: true, file };
  } catch {
    // Another process created it first.
    return { token: fs.readFileSync(file, "utf8").trim(), generated: false, file };
  }
}

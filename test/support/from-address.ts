import http from "node:http";

/**
 * An HTTP request sent from a chosen loopback address (127.0.0.0/8 all reach
 * the gateway on 127.0.0.1), so tests can be several clients for the
 * per-address limits without a proxy in between.
 */
export function requestFrom(
  baseUrl: string,
  localAddress: string,
  method: string,
  path: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: http.IncomingHttpHeaders }> {
  const url = new URL(baseUrl);
  const payload = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
  const headers: Record<string, string> = { ...(payload ? { "Content-Type": "application/json", "Content-Length": String(payload.length) } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, localAddress, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (d: Buffer) => chunks.push(d));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: any = text;
        try {
          body = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON: keep the text */
        }
        resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
      });
      res.on("error", reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(payload);
  });
}

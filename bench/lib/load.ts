/**
 * Load points. Three kinds:
 *
 * - saturation: autocannon with N connections, each sending its next request
 *   as soon as the last one returns (closed loop): the most the path can do.
 * - fixed offered rate: an open-loop sender paced at one request every 1/rate
 *   seconds over keep-alive node:http connections. autocannon's own rate
 *   limiter sends each connection's share of a second in one burst at the
 *   start of the second, which measures how a burst queues rather than the
 *   latency at a steady rate; so the paced sender is used here. Latency is
 *   measured from the request's scheduled send time (so a stall that delays
 *   later requests counts against them: no coordinated omission), in
 *   microseconds, and percentiles are exact.
 * - sequential (one connection): one request at a time, each timed in
 *   microseconds by the same sender (autocannon counts whole milliseconds).
 */
import http from "node:http";

// autocannon ships no types.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon: (opts: Record<string, unknown>) => Promise<any> = require("autocannon");

export interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  /** A fresh JSON body for the n-th request (unique ids, round-robin over seeded data). */
  body?: (n: number) => unknown;
  /** Whether a 2xx answer is the expected one (e.g. a refund really applied). */
  verify?: (body: string) => boolean;
}

export interface LoadOptions {
  url: string;
  durationSec: number;
  /** Saturation: concurrent connections. */
  connections: number;
  /** Requests per second (fixed offered rate); unset = saturation. */
  rate?: number;
}

export interface LoadResult {
  /** Successful answers (2xx and verified). */
  ok: number;
  /** Successful answers per second. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Non-2xx answers, socket errors, timeouts and bodies that fail `verify`. */
  errors: number;
  /** One example of what went wrong, if anything did. */
  firstError?: string;
}

export function runLoad(spec: RequestSpec, opts: LoadOptions): Promise<LoadResult> {
  if (opts.rate) return runPaced(spec, opts.url, opts.rate, opts.durationSec);
  return opts.connections === 1 ? runSequential(spec, opts.url, opts.durationSec) : runSaturation(spec, opts);
}

async function runSaturation(spec: RequestSpec, opts: LoadOptions): Promise<LoadResult> {
  let n = 0;
  let firstError: string | undefined;
  const headers = { ...(spec.body ? { "content-type": "application/json" } : {}), ...spec.headers };
  const result = await autocannon({
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationSec,
    timeout: 10,
    requests: [
      {
        method: spec.method,
        path: spec.path,
        headers,
        setupRequest: (req: Record<string, unknown>) => {
          if (spec.body) req.body = JSON.stringify(spec.body(n++));
          return req;
        },
        onResponse: (status: number, body: string) => {
          if (firstError === undefined && (status < 200 || status >= 300)) firstError = `${status} ${body.slice(0, 300)}`;
        },
      },
    ],
    verifyBody: (body: string) => {
      const ok = !spec.verify || spec.verify(body);
      if (!ok && firstError === undefined) firstError = `unexpected body: ${body.slice(0, 300)}`;
      return ok;
    },
  });
  const mismatches = (result.mismatches as number) ?? 0;
  const ok = result.requests.total - result.non2xx - mismatches;
  return {
    ok,
    rps: ok / opts.durationSec,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    errors: result.non2xx + result.errors + result.timeouts + mismatches,
    firstError,
  };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Sends the n-th request of `spec`; resolves with what went wrong, or null when it answered as expected. */
function send(spec: RequestSpec, base: URL, agent: http.Agent, n: number): Promise<string | null> {
  return new Promise((resolve) => {
    const body = spec.body ? JSON.stringify(spec.body(n)) : undefined;
    const headers: Record<string, string | number> = { ...spec.headers };
    if (body !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    const req = http.request({ host: base.hostname, port: base.port, path: spec.path, method: spec.method, headers, agent, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) resolve(`${status} ${text.slice(0, 300)}`);
        else if (spec.verify && !spec.verify(text)) resolve(`unexpected body: ${text.slice(0, 300)}`);
        else resolve(null);
      });
      res.on("error", (err) => resolve(err.message));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err) => resolve(err.message));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/**
 * A point's answers: each one's outcome from `send` with the time it counts from (its send, or its scheduled send),
 * then the point's result over its elapsed seconds.
 */
function answers() {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  return {
    record(failed: string | null, sinceNs: bigint): void {
      if (failed === null) latencies.push(Number(process.hrtime.bigint() - sinceNs) / 1e6);
      else {
        errors += 1;
        firstError ??= failed;
      }
    },
    result(elapsedSec: number): LoadResult {
      latencies.sort((a, b) => a - b);
      const round = (x: number) => Math.round(x * 100) / 100;
      return {
        ok: latencies.length,
        rps: latencies.length / elapsedSec,
        p50: round(percentile(latencies, 50)),
        p90: round(percentile(latencies, 90)),
        p99: round(percentile(latencies, 99)),
        max: round(latencies[latencies.length - 1] ?? NaN),
        errors,
        firstError,
      };
    },
  };
}

/** One request at a time over one keep-alive connection for `durationSec`: a read's own latency, without a queue. */
async function runSequential(spec: RequestSpec, url: string, durationSec: number): Promise<LoadResult> {
  const base = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const answered = answers();
  const start = process.hrtime.bigint();
  const end = start + BigInt(Math.round(durationSec * 1e9));
  for (let n = 0; process.hrtime.bigint() < end; n++) {
    const sent = process.hrtime.bigint();
    answered.record(await send(spec, base, agent, n), sent);
  }
  agent.destroy();
  return answered.result(Number(process.hrtime.bigint() - start) / 1e9);
}

async function runPaced(spec: RequestSpec, url: string, rate: number, durationSec: number): Promise<LoadResult> {
  const base = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const total = Math.round(rate * durationSec);
  const answered = answers();

  const start = process.hrtime.bigint();
  const intervalNs = BigInt(Math.round(1e9 / rate));
  const inflight: Promise<void>[] = [];
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = process.hrtime.bigint();
      while (next < total && start + BigInt(next) * intervalNs <= now) {
        const scheduled = start + BigInt(next) * intervalNs;
        inflight.push(send(spec, base, agent, next).then((failed) => answered.record(failed, scheduled)));
        next += 1;
      }
      if (next >= total) return resolve();
      // Sleep until the next send is due (timers have ~1 ms granularity; the latency counts from the due time anyway).
      const waitMs = Number(start + BigInt(next) * intervalNs - now) / 1e6;
      setTimeout(tick, Math.max(0, Math.floor(waitMs)));
    };
    tick();
  });
  await Promise.all(inflight);
  // Until the last answer: a rate the target cannot sustain drains long after the sending stopped, and is not a rate it served.
  const elapsedSec = Math.max(durationSec, Number(process.hrtime.bigint() - start) / 1e9);
  agent.destroy();
  return answered.result(elapsedSec);
}

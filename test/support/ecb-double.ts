/**
 * A local double of the European Central Bank's reference-rate feed (docs/currencies.md), so no test reaches the internet: an
 * HTTP server on 127.0.0.1 answering GET /stats/eurofxref/eurofxref-hist-90d.xml with the real eurofxref format (as in
 * test/fixtures/ecb/eurofxref-hist-sample.xml: newest day first, quotes per euro), or whatever a test makes it serve
 * (a broken document, an error status, no answer at all).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One day of the feed: units of each currency per euro, as published (codes in upper case, as the ECB writes them). */
export interface EcbDay {
  day: string;
  rates: Record<string, string>;
}

/** The eurofxref document of these days, as the ECB publishes it (newest day first). */
export function ecbXml(days: readonly EcbDay[]): string {
  const cubes = [...days]
    .sort((a, b) => b.day.localeCompare(a.day))
    .map(
      (d) =>
        `\t\t<Cube time='${d.day}'>\n${Object.entries(d.rates)
          .map(([currency, rate]) => `\t\t\t<Cube currency='${currency.toUpperCase()}' rate='${rate}'/>\n`)
          .join("")}\t\t</Cube>\n`,
    )
    .join("");
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">\n` +
    `\t<gesmes:subject>Reference rates</gesmes:subject>\n` +
    `\t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n\t</gesmes:Sender>\n` +
    `\t<Cube>\n${cubes}\t</Cube>\n` +
    `</gesmes:Envelope>\n`
  );
}

export const ECB_FEED_PATH = "/stats/eurofxref/eurofxref-hist-90d.xml";

export interface EcbDouble {
  /** The feed's URL on this double. */
  url: string;
  /** GET requests of the feed answered so far. */
  requests: number;
  /** Serves these days from now on. */
  serveDays(days: readonly EcbDay[]): void;
  /** Serves this body with this status from now on (a broken document, a maintenance page). */
  serveRaw(body: string, status?: number): void;
  /** Accepts requests and never answers them (a fetch must time out). */
  hang(): void;
  close(): Promise<void>;
}

export async function startEcbDouble(days: readonly EcbDay[] = []): Promise<EcbDouble> {
  let answer: { status: number; body: string } | "hang" = { status: 200, body: ecbXml(days) };
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || req.url !== ECB_FEED_PATH) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found");
      return;
    }
    double.requests++;
    if (answer === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    res.writeHead(answer.status, { "Content-Type": "text/xml" }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const double: EcbDouble = {
    url: `http://127.0.0.1:${port}${ECB_FEED_PATH}`,
    requests: 0,
    serveDays: (d) => void (answer = { status: 200, body: ecbXml(d) }),
    serveRaw: (body, status = 200) => void (answer = { status, body }),
    hang: () => void (answer = "hang"),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return double;
}

/**
 * Whether a client address belongs to a hosting network: a cloud, VPS or server-rental provider's, where people do not
 * browse from but scripts, scrapers and click farms run. Read offline: the address's autonomous system from an IP to
 * ASN table (by default @ip-location-db/asn, RouteViews + NRO + DB-IP data, CC BY 4.0; IP_ASN_DATABASE_DIR names a
 * folder with fresher `asn-ipv4-num.csv` and `asn-ipv6-num.csv` of the same format from the project's releases),
 * checked against HOSTING_ASNS below. Only the hosting providers' ranges are kept in memory (about 12,000).
 *
 * The table is read on the first public address a click brings (about a quarter of a second, once per process), not
 * at start: processes that only see private addresses (tests, a local install) never pay for it.
 */
import fs from "node:fs";
import path from "node:path";
import { isIPv4, isIPv6 } from "node:net";

/**
 * The autonomous systems of hosting providers: the large clouds and the VPS and dedicated-server providers. A consumer
 * VPN on one of them looks like a hosting network too (docs/fraud.md, false positives); Cloudflare (13335) is left out
 * because its WARP app carries ordinary people's browsing.
 */
export const HOSTING_ASNS: ReadonlyMap<number, string> = new Map([
  [16509, "Amazon (AWS)"],
  [14618, "Amazon (AWS)"],
  [8987, "Amazon (AWS)"],
  [15169, "Google"],
  [396982, "Google Cloud"],
  [19527, "Google"],
  [8075, "Microsoft (Azure)"],
  [31898, "Oracle Cloud"],
  [45102, "Alibaba Cloud"],
  [37963, "Alibaba Cloud"],
  [132203, "Tencent Cloud"],
  [14061, "DigitalOcean"],
  [16276, "OVH"],
  [24940, "Hetzner"],
  [213230, "Hetzner Cloud"],
  [63949, "Akamai (Linode)"],
  [20473, "Vultr (Choopa)"],
  [12876, "Scaleway"],
  [51167, "Contabo"],
  [40021, "Contabo"],
  [60781, "Leaseweb"],
  [28753, "Leaseweb"],
  [30633, "Leaseweb"],
  [36352, "ColoCrossing"],
  [53667, "FranTech (BuyVM)"],
  [8100, "QuadraNet"],
  [19318, "Interserver"],
  [197540, "netcup"],
  [9009, "M247"],
  [46606, "Unified Layer"],
  [26347, "DreamHost"],
]);

const BUNDLED_DIR = "@ip-location-db/asn";

interface Ranges {
  /** Sorted, non-overlapping inclusive ranges: IPv4 as numbers, IPv6 as BigInts. */
  v4: { starts: Float64Array; ends: Float64Array };
  v6: { starts: bigint[]; ends: bigint[] };
}

function readRanges<T>(file: string, parse: (text: string) => T): { starts: T[]; ends: T[] } {
  const text = fs.readFileSync(file, "latin1");
  const starts: T[] = [];
  const ends: T[] = [];
  // Lines are "start,end,asn,organisation" (the organisation may be quoted and hold commas); only the first three are read.
  for (let i = 0; i < text.length;) {
    let end = text.indexOf("\n", i);
    if (end < 0) end = text.length;
    const first = text.indexOf(",", i);
    const second = text.indexOf(",", first + 1);
    const third = text.indexOf(",", second + 1);
    if (first > i && second > first && second < end && HOSTING_ASNS.has(Number(text.slice(second + 1, third > 0 && third < end ? third : end)))) {
      starts.push(parse(text.slice(i, first)));
      ends.push(parse(text.slice(first + 1, second)));
    }
    i = end + 1;
  }
  return { starts, ends };
}

/** The last index whose start is at most `value`, or -1. */
function lastAtOrBelow<T extends number | bigint>(starts: ArrayLike<T>, value: T): number {
  let low = 0;
  let high = starts.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (starts[mid] <= value) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

function ipv4Number(address: string): number {
  return address.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function ipv6Number(address: string): bigint {
  const [head, tail] = address.includes("::") ? address.split("::") : [address, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((n, g) => (n << 16n) + BigInt(parseInt(g || "0", 16)), 0n);
}

export class HostingNetworks {
  private ranges: Ranges | null = null;

  constructor(private readonly dir = process.env.IP_ASN_DATABASE_DIR || path.dirname(require.resolve(`${BUNDLED_DIR}/package.json`))) {}

  /** Whether the address (IPv4, or IPv6 without a zone or prefix) is in a hosting provider's range; false for anything else. */
  contains(address: string): boolean {
    if (isIPv4(address)) {
      const { starts, ends } = this.load().v4;
      const value = ipv4Number(address);
      const i = lastAtOrBelow(starts, value);
      return i >= 0 && value <= ends[i];
    }
    if (isIPv6(address) && !address.includes("%") && !address.includes(".")) {
      const { starts, ends } = this.load().v6;
      const value = ipv6Number(address.toLowerCase());
      const i = lastAtOrBelow(starts, value);
      return i >= 0 && value <= ends[i];
    }
    return false;
  }

  private load(): Ranges {
    if (!this.ranges) {
      const v4 = readRanges(path.join(this.dir, "asn-ipv4-num.csv"), Number);
      const v6 = readRanges(path.join(this.dir, "asn-ipv6-num.csv"), BigInt);
      this.ranges = { v4: { starts: Float64Array.from(v4.starts), ends: Float64Array.from(v4.ends) }, v6 };
    }
    return this.ranges;
  }
}

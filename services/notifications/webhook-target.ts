/**
 * Where outbound webhooks may go (docs/security.md, "Outbound webhooks: no internal targets"). A merchant's endpoint
 * must be a public internet address: a host that is, or resolves to, a loopback, private, link-local, unspecified,
 * multicast, carrier-grade NAT or reserved address (IPv4-mapped and other IPv4-in-IPv6 forms included) is refused
 * when the endpoint is registered or enabled, and again at delivery against the address the connection uses
 * (webhook-client.ts). `WEBHOOK_ALLOW_PRIVATE_TARGETS=true` lifts this for self-hosted installs and development.
 *
 * Spellings: hosts are read from WHATWG `new URL()`, which already turns 0x7f000001, 2130706433, 127.1, 0177.0.0.1
 * and a trailing dot into 127.0.0.1, and [::ffff:127.0.0.1] into [::ffff:7f00:1]; this module strips the brackets
 * and a trailing dot from names and classifies what is left.
 */
import dns from "node:dns";
import net from "node:net";

/** The operator setting (docs/deploy.md): `true` allows private targets. Unset or anything else: refused. */
export const ALLOW_PRIVATE_TARGETS_ENV = "WEBHOOK_ALLOW_PRIVATE_TARGETS";

export function privateTargetsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[ALLOW_PRIVATE_TARGETS_ENV]?.trim().toLowerCase() === "true";
}

/** Why an address is not a public one. */
export type AddressKind = "loopback" | "private" | "link-local" | "unspecified" | "multicast" | "shared" | "reserved";

const KIND_TEXT: Record<AddressKind, string> = {
  loopback: "a loopback address",
  private: "a private-network address",
  "link-local": "a link-local address (such as a cloud metadata service)",
  unspecified: "the unspecified address",
  multicast: "a multicast address",
  shared: "a carrier-grade NAT (100.64.0.0/10) address",
  reserved: "a reserved address",
};

const V4_RANGES: Array<[string, number, AddressKind]> = [
  ["0.0.0.0", 8, "unspecified"], // "this network"; 0.0.0.0 reaches the local host
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"], // IETF protocol assignments
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"], // benchmarking
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"], // with 255.255.255.255, the broadcast address
];
const V6_RANGES: Array<[string, number, AddressKind]> = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["fc00::", 7, "private"], // unique local
  ["fec0::", 10, "private"], // site-local (deprecated)
  ["fe80::", 10, "link-local"],
  ["ff00::", 8, "multicast"],
  ["100::", 64, "reserved"], // discard-only
  ["64:ff9b:1::", 48, "reserved"], // local-use NAT64
];

const LISTS = (Object.keys(KIND_TEXT) as AddressKind[]).map((kind) => {
  const list = new net.BlockList();
  for (const [prefix, bits, k] of V4_RANGES) if (k === kind) list.addSubnet(prefix, bits, "ipv4");
  for (const [prefix, bits, k] of V6_RANGES) if (k === kind) list.addSubnet(prefix, bits, "ipv6");
  return [kind, list] as const;
});

/** The eight 16-bit words of a valid IPv6 address (a trailing dotted IPv4 part included). */
function ipv6Words(ip: string): number[] {
  let text = ip.split("%")[0];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, null];
  const words = (part: string) => (part ? part.split(":").map((w) => parseInt(w, 16)) : []);
  const front = words(head);
  if (tail === null) return front;
  const back = words(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const v4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 one carries and reaches: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
 * NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::).
 */
function embeddedV4(ip: string): string | null {
  const w = ipv6Words(ip);
  if (w.length !== 8) return null;
  const zeros = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && w[5] === 0xffff) return v4Of(w[6], w[7]);
  if (zeros(0, 6) && (w[6] !== 0 || w[7] > 1)) return v4Of(w[6], w[7]);
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4Of(w[6], w[7]);
  if (w[0] === 0x2002) return v4Of(w[1], w[2]);
  return null;
}

/** Why an IP address is not a public one, or null when it is. Anything that is not an IP address is null. */
export function classifyAddress(ip: string): AddressKind | null {
  const family = net.isIP(ip);
  if (family === 0) return null;
  if (family === 6) {
    const v4 = embeddedV4(ip);
    if (v4 !== null) return classifyAddress(v4);
  }
  const type = family === 4 ? "ipv4" : "ipv6";
  for (const [kind, list] of LISTS) if (list.check(ip, type)) return kind;
  return null;
}

/** A URL's host as a connection uses it: without IPv6 brackets or a trailing dot, lower case. */
export function hostOf(url: URL): string {
  const host = url.hostname.toLowerCase();
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1);
  return host.replace(/\.+$/, "");
}

/** Names that are loopback by definition (RFC 6761), whatever a resolver says. */
const isLoopbackName = (host: string) => host === "localhost" || host.endsWith(".localhost");

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name. The delivery client connects only to what this returned (no second lookup). */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address. */
export const systemResolve: Resolve = async (hostname) => {
  const all = await dns.promises.lookup(hostname, { all: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * What the notifications service decides with: whether private targets are allowed (the operator setting) and the
 * resolver. One object per service instance; tests replace `resolve` to make a name resolve where they want.
 */
export interface TargetPolicy {
  allowPrivate: boolean;
  resolve: Resolve;
}

/** Why a webhook target is refused: the host, what it is, and the address when the host was a name that resolved to it. */
export class TargetRefusal {
  constructor(
    readonly host: string,
    readonly kind: AddressKind | "loopback-name",
    /** The address the name resolved to (null for an IP literal, or a name refused by itself). */
    readonly resolvedTo: string | null,
  ) {}

  /** For the caller and the delivery log: what the host is, never which internal address a name resolved to. */
  get message(): string {
    const shown = net.isIP(this.host) === 6 ? `[${this.host}]` : this.host;
    const what = this.kind === "loopback-name" ? "is a loopback name" : this.resolvedTo !== null ? `resolves to ${KIND_TEXT[this.kind]}` : `is ${KIND_TEXT[this.kind]}`;
    return `The webhook URL's host ${shown} ${what}: webhooks are only sent to public internet addresses (an operator can allow private targets with ${ALLOW_PRIVATE_TARGETS_ENV}=true).`;
  }

  /** For the server log: with the resolved address. */
  get detail(): string {
    return this.resolvedTo === null ? this.message : `${this.message} (${this.host} -> ${this.resolvedTo})`;
  }
}

/** The refusal for a host without resolving it (an IP literal or a loopback name); null when it needs a lookup or is public. */
export function refusalOfHost(host: string): TargetRefusal | null {
  if (isLoopbackName(host)) return new TargetRefusal(host, "loopback-name", null);
  const kind = classifyAddress(host);
  return kind ? new TargetRefusal(host, kind, null) : null;
}

/** The refusal for a name's resolved addresses: any one that is not public refuses the name. */
export function refusalOfAddresses(host: string, addresses: ResolvedAddress[]): TargetRefusal | null {
  for (const a of addresses) {
    const kind = classifyAddress(a.address);
    if (kind) return new TargetRefusal(host, kind, a.address);
  }
  return null;
}

/**
 * Checks a URL when an endpoint is registered or enabled: null when it may be used. A name that does not resolve
 * (or not within `resolveTimeoutMs`) is accepted: the delivery checks the address it connects to anyway.
 */
export async function refusalOfUrl(url: string, policy: TargetPolicy, resolveTimeoutMs = 3000): Promise<TargetRefusal | null> {
  if (policy.allowPrivate) return null;
  const host = hostOf(new URL(url));
  const byHost = refusalOfHost(host);
  if (byHost || net.isIP(host) !== 0) return byHost;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), resolveTimeoutMs);
  });
  try {
    const addresses = await Promise.race([policy.resolve(host), timeout]);
    return addresses ? refusalOfAddresses(host, addresses) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

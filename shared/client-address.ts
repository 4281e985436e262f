import { isIPv4, isIPv6 } from "node:net";

/**
 * The client address that per-address limits count under.
 *
 * Without a trusted proxy it is the socket's peer. With `trustProxy` (the
 * gateway sits behind one TLS-terminating proxy) it is the last
 * `X-Forwarded-For` entry: the address that proxy saw. Earlier entries are
 * written by the client and could be anything, so they are never used.
 *
 * IPv4-mapped IPv6 addresses are reduced to IPv4; other IPv6 addresses to
 * their /64 network, since one host usually has a whole /64 to rotate in.
 */
export function clientAddressOf(remoteAddress: string | undefined, forwardedFor: string | string[] | undefined, trustProxy: boolean): string {
  let address = remoteAddress ?? "";
  if (trustProxy && forwardedFor !== undefined) {
    const list = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor).split(",");
    const last = list[list.length - 1].trim();
    if (last) address = last;
  }
  return normalizeAddress(address);
}

export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped && isIPv4(mapped[1])) return mapped[1];
  if (isIPv4(address)) return address;
  if (isIPv6(address)) return `${ipv6Groups(address).slice(0, 4).join(":")}::/64`;
  // Not an address (a proxy wrote something else): count it as given, bounded in length.
  return address.slice(0, 64) || "unknown";
}

/** The eight 16-bit groups of an IPv6 address, expanded (`::` filled with zeros, no zone id). */
function ipv6Groups(address: string): string[] {
  const bare = address.split("%")[0].toLowerCase();
  const [head, tail] = bare.includes("::") ? bare.split("::") : [bare, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // An embedded IPv4 tail takes two groups; its value never reaches the /64 kept, so placeholders do.
  const expand = (groups: string[]) => groups.flatMap((g) => (isIPv4(g) ? ["0", "0"] : [g]));
  const l = expand(left);
  const r = expand(right);
  const middle = tail === undefined ? [] : Array(8 - l.length - r.length).fill("0");
  return [...l, ...middle, ...r].map((g) => g.replace(/^0+(?=.)/, "") || "0");
}

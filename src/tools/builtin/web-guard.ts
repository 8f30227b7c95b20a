// Where web_fetch may connect: every address a host resolves to is checked, and the request
// then goes to one of those checked addresses (see web-fetch.ts), so a second DNS answer
// cannot swap in a private address between the check and the connection.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

export interface WebAccess {
  /** Reach loopback, private and link-local addresses too. */
  allowPrivate: boolean;
  /** Host names that may resolve to such addresses (exact names, case-insensitive). */
  allowHosts: string[];
}

export interface CheckedHost {
  /** The URL's host name without IPv6 brackets, e.g. `example.com` or `::1`. */
  hostname: string;
  /** The addresses it resolved to, all of them allowed, in resolver order. */
  addresses: string[];
}

const bare = (host: string) => host.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();

/** Resolves the host and refuses it when any of its addresses is not public (unless allowed). */
export async function checkHost(rawHostname: string, access: WebAccess): Promise<CheckedHost> {
  const hostname = bare(rawHostname);
  if (!hostname) throw new Error("the URL has no host");
  const trusted = access.allowPrivate || access.allowHosts.some((h) => bare(h) === hostname);
  if (!trusted && (hostname === "localhost" || hostname.endsWith(".localhost"))) {
    throw new Error(`refusing to fetch ${hostname}: it names this machine (loopback); ${HOW_TO_ALLOW}`);
  }
  let addresses: string[];
  if (isIP(hostname)) addresses = [hostname];
  else {
    try {
      addresses = (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);
    } catch (e) {
      throw new Error(`cannot resolve ${hostname}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    if (!addresses.length) throw new Error(`cannot resolve ${hostname}: no addresses`);
  }
  if (!trusted) {
    for (const address of addresses) {
      const kind = restrictedKind(address);
      if (kind) {
        const via = address === hostname ? "" : ` (it resolves to ${address})`;
        throw new Error(`refusing to fetch ${hostname}${via}: ${kind} addresses are blocked; ${HOW_TO_ALLOW}`);
      }
    }
  }
  return { hostname, addresses };
}

const HOW_TO_ALLOW =
  "an operator can allow it with tools.web.allowHosts in config.json, or allow all private addresses with WEB_FETCH_ALLOW_PRIVATE=true";

type V4Range = [base: number, bits: number, kind: string];
const V4_RANGES: V4Range[] = [
  [v4(0, 0, 0, 0), 8, "unspecified"],
  [v4(10, 0, 0, 0), 8, "private"],
  [v4(100, 64, 0, 0), 10, "shared (CGNAT)"],
  [v4(127, 0, 0, 0), 8, "loopback"],
  [v4(169, 254, 0, 0), 16, "link-local"],
  [v4(172, 16, 0, 0), 12, "private"],
  [v4(192, 0, 0, 0), 24, "reserved"],
  [v4(192, 168, 0, 0), 16, "private"],
  [v4(198, 18, 0, 0), 15, "reserved"],
  [v4(224, 0, 0, 0), 4, "multicast"],
  [v4(240, 0, 0, 0), 4, "reserved"],
];

function v4(a: number, b: number, c: number, d: number): number {
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function inV4Range(addr: number, [base, bits]: V4Range): boolean {
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (addr & mask) >>> 0 === base;
}

function classifyV4(addr: number): string | null {
  return V4_RANGES.find((r) => inV4Range(addr, r))?.[2] ?? null;
}

function parseV4(s: string): number | null {
  const parts = s.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return v4(a, b, c, d);
}

/** Eight 16-bit groups, or null when `s` is not an IPv6 address. Zone ids are dropped. */
function parseV6(s: string): number[] | null {
  let text = s.split("%")[0]!;
  const groups: number[] = [];
  // an embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const n = parseV4(tail);
    if (n === null) return null;
    text = `${text.slice(0, lastColon + 1)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part ? part.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)) : []);
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const fill = 8 - head.length - rest.length;
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  groups.push(...head, ...Array<number>(halves.length === 2 ? fill : 0).fill(0), ...rest);
  return groups.some(Number.isNaN) ? null : groups;
}

function classifyV6(g: number[]): string | null {
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  const embeddedV4 = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  if (zeroUpTo(8)) return "unspecified";
  if (zeroUpTo(7) && g[7] === 1) return "loopback";
  // IPv4-mapped ::ffff:a.b.c.d and the old IPv4-compatible ::a.b.c.d carry an IPv4 address
  if (zeroUpTo(5) && (g[5] === 0xffff || g[5] === 0)) {
    const kind = classifyV4(embeddedV4(g[6]!, g[7]!));
    return kind ? `IPv4-mapped ${kind}` : null;
  }
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) reach an IPv4 address too
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) {
    const kind = classifyV4(embeddedV4(g[6]!, g[7]!));
    return kind ? `NAT64 ${kind}` : null;
  }
  if (g[0] === 0x2002) {
    const kind = classifyV4(embeddedV4(g[1]!, g[2]!));
    return kind ? `6to4 ${kind}` : null;
  }
  const first = g[0]!;
  if ((first & 0xfe00) === 0xfc00) return "private (unique local)";
  if ((first & 0xffc0) === 0xfe80) return "link-local";
  if ((first & 0xffc0) === 0xfec0) return "site-local";
  if ((first & 0xff00) === 0xff00) return "multicast";
  return null;
}

/**
 * What kind of non-public address this is (`loopback`, `private`, `link-local`, ...), or
 * null for a public one. Anything that does not parse as an address counts as restricted.
 */
export function restrictedKind(address: string): string | null {
  const family = isIP(address.split("%")[0]!);
  if (family === 4) return classifyV4(parseV4(address)!);
  if (family === 6) {
    const groups = parseV6(address);
    return groups ? classifyV6(groups) : "unparsable";
  }
  return "unparsable";
}

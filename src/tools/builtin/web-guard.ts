// Where web_fetch may connect. A host is checked against policy before it is resolved: a
// literal address, a local-only name (`localhost`, `nas`, `*.internal`, ...) or a cloud
// metadata service is refused without a DNS lookup, which could itself carry data out. A name
// is resolved once, every address it resolves to is checked, and the request then goes to one
// of those checked addresses (see web-fetch.ts), so a second DNS answer cannot swap in a
// private address between the check and the connection.
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

export interface WebAccess {
  /** Reach loopback, private and link-local addresses too (not cloud metadata services). */
  allowPrivate: boolean;
  /** Host names that may resolve to such addresses (exact names, case-insensitive). */
  allowHosts: string[];
}

/** A host name's addresses, in resolver order. */
export type Resolve = (hostname: string) => Promise<string[]>;

export const systemResolve: Resolve = async (hostname) => (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface CheckedHost {
  /** The URL's host name without IPv6 brackets, e.g. `example.com` or `::1`. */
  hostname: string;
  /** The addresses it resolved to, all of them allowed, in resolver order. */
  addresses: string[];
}

const bare = (host: string) => host.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();

/**
 * Cloud instance metadata services (AWS, GCP, Azure, ECS, Alibaba, Oracle): they hand out the
 * machine's credentials, so they stay refused with allowPrivate; allowHosts may name one.
 */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);
const METADATA_ADDRESSES = new BlockList();
for (const a of ["169.254.169.254", "169.254.170.2", "168.63.129.16", "100.100.100.200", "192.0.0.192"]) METADATA_ADDRESSES.addAddress(a, "ipv4");
METADATA_ADDRESSES.addAddress("fd00:ec2::254", "ipv6");
const isMetadata = (address: string) => {
  const family = isIP(address);
  return family !== 0 && METADATA_ADDRESSES.check(address, family === 4 ? "ipv4" : "ipv6");
};

/** Suffixes of names only a local network resolves (special-use or never delegated). */
const LOCAL_SUFFIXES = [".local", ".internal", ".home.arpa", ".lan", ".home", ".corp", ".intranet", ".localdomain"];

/** Why a name can only lead to this machine or the local network, or null. */
function localName(hostname: string): string | null {
  if (hostname === "localhost" || hostname.endsWith(".localhost")) return "it names this machine (loopback)";
  if (!hostname.includes(".")) return "a name without a dot is a local network name";
  const suffix = LOCAL_SUFFIXES.find((s) => hostname.endsWith(s));
  return suffix ? `${suffix} names are local network names` : null;
}

/**
 * Checks the host against policy, resolves it (names only, once), and refuses it when any
 * of its addresses is not public (unless allowed).
 */
export async function checkHost(rawHostname: string, access: WebAccess, resolve: Resolve = systemResolve): Promise<CheckedHost> {
  const hostname = bare(rawHostname);
  if (!hostname) throw new Error("the URL has no host");
  const listed = access.allowHosts.some((h) => bare(h) === hostname);
  const trusted = access.allowPrivate || listed;
  const refuse = (why: string): never => {
    throw new Error(`refusing to fetch ${hostname}: ${why}; ${why.endsWith(METADATA) ? HOW_TO_ALLOW_METADATA : HOW_TO_ALLOW}`);
  };
  /** Why this address may not be reached, or null. */
  const refusal = (address: string): string | null => {
    const kind = trusted ? null : restrictedKind(address);
    if (kind) return `${kind} addresses are blocked`;
    return !listed && isMetadata(address) ? METADATA : null;
  };

  if (isIP(hostname)) {
    const why = refusal(hostname);
    if (why) refuse(why);
    return { hostname, addresses: [hostname] };
  }
  if (!listed && METADATA_NAMES.has(hostname)) refuse(METADATA);
  const local = trusted ? null : localName(hostname);
  if (local) refuse(local);

  let addresses: string[];
  try {
    addresses = await resolve(hostname);
  } catch (e) {
    throw new Error(`cannot resolve ${hostname}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!addresses.length) throw new Error(`cannot resolve ${hostname}: no addresses`);
  for (const address of addresses) {
    const why = refusal(address);
    if (why) refuse(`it resolves to ${address}: ${why}`);
  }
  return { hostname, addresses };
}

const METADATA = "it is a cloud metadata service";
const HOW_TO_ALLOW =
  "an operator can allow it with tools.web.allowHosts in config.json, or allow all private addresses with WEB_FETCH_ALLOW_PRIVATE=true";
const HOW_TO_ALLOW_METADATA = "only naming it in tools.web.allowHosts in config.json allows it";

/** Non-public IPv4 ranges: [network, prefix length, kind]. */
const V4_RANGES: [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

/** The 32 bits of an IPv4 address as two IPv6 groups, e.g. `7f00:0`. */
const v4Groups = (a: string) => {
  const [b0, b1, b2, b3] = a.split(".").map(Number) as [number, number, number, number];
  return `${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
};

/**
 * Every non-public range, in the order they are asked: IPv6 forms that carry an IPv4 address
 * (mapped ::ffff:a.b.c.d, the old compatible ::a.b.c.d, NAT64 64:ff9b::/96 and 6to4 2002::/16)
 * before the plain IPv6 ranges, so each is named for what it reaches.
 */
const V6_RANGES: [string, BlockList][] = [];
const V4_LISTS: [string, BlockList][] = [];
function range(into: [string, BlockList][], kind: string, network: string, prefix: number, family: "ipv4" | "ipv6"): void {
  let list = into.find(([k]) => k === kind)?.[1];
  if (!list) into.push([kind, (list = new BlockList())]);
  list.addSubnet(network, prefix, family);
}
range(V6_RANGES, "unspecified", "::", 128, "ipv6");
range(V6_RANGES, "loopback", "::1", 128, "ipv6");
for (const [network, prefix, kind] of V4_RANGES) {
  range(V4_LISTS, kind, network, prefix, "ipv4");
  range(V6_RANGES, `IPv4-mapped ${kind}`, `::ffff:${network}`, 96 + prefix, "ipv6");
  range(V6_RANGES, `IPv4-mapped ${kind}`, `::${network}`, 96 + prefix, "ipv6");
  range(V6_RANGES, `NAT64 ${kind}`, `64:ff9b::${network}`, 96 + prefix, "ipv6");
  range(V6_RANGES, `6to4 ${kind}`, `2002:${v4Groups(network)}::`, 16 + prefix, "ipv6");
}
range(V6_RANGES, "private (unique local)", "fc00::", 7, "ipv6");
range(V6_RANGES, "link-local", "fe80::", 10, "ipv6");
range(V6_RANGES, "site-local", "fec0::", 10, "ipv6");
range(V6_RANGES, "multicast", "ff00::", 8, "ipv6");

/**
 * What kind of non-public address this is (`loopback`, `private`, `link-local`, ...), or
 * null for a public one. Anything that does not parse as an address counts as restricted.
 */
export function restrictedKind(address: string): string | null {
  const bareAddress = address.split("%")[0]!;
  const family = isIP(bareAddress);
  if (!family) return "unparsable";
  const lists = family === 4 ? V4_LISTS : V6_RANGES;
  return lists.find(([, list]) => list.check(bareAddress, family === 4 ? "ipv4" : "ipv6"))?.[0] ?? null;
}

/**
 * A request sent to an address checkHost approved rather than to the name: the URL carries
 * the IP, the Host header and the TLS server name carry the original host, so a DNS answer
 * that changes after the check (rebinding) is never used, and certificates are still
 * verified against the real host name. Addresses are tried in resolver order; the last
 * connection error is thrown when none answers. Redirects are the caller's to follow.
 */
export async function fetchPinned(
  url: URL,
  checked: CheckedHost,
  init: { headers: Record<string, string>; signal: AbortSignal; ca?: string | string[] },
): Promise<Response> {
  let lastError: unknown;
  for (const address of checked.addresses) {
    const target = new URL(url.href);
    target.hostname = address.includes(":") ? `[${address}]` : address;
    try {
      return await fetch(target, {
        method: "GET",
        redirect: "manual",
        signal: init.signal,
        headers: { ...init.headers, host: url.host },
        tls: { ...(isIP(checked.hostname) ? {} : { serverName: checked.hostname }), ...(init.ca ? { ca: init.ca } : {}) },
      });
    } catch (e) {
      if (init.signal.aborted) throw e;
      lastError = e;
    }
  }
  throw lastError;
}

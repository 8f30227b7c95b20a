// Host patterns of an extension's manifest: its network allow list and the hosts its
// credential is bound to. `api.example.com` (any port), `*.example.com` (its subdomains),
// `127.0.0.1:8080` and `[::1]:8080` (that port only).
import { isIP } from "node:net";
import { getDomain } from "tldts";
import { restrictedKind, type WebAccess } from "../tools/builtin/web-guard";

/** No exceptions: what install and load check against when the operator allowed nothing. */
export const STRICT_ACCESS: WebAccess = { allowPrivate: false, allowHosts: [] };

const LOOPBACK_NAMES = new Set(["localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"]);
/** Cloud instance metadata services, by name and by the addresses outside link-local they use. */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);
const METADATA_ADDRESSES = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254"]);

const bare = (host: string) => host.replace(/^\[|\]$/g, "").replace(/\.$/, "").toLowerCase();

/**
 * Whether a URL is matched by these patterns: `api.example.com` (any port), `*.example.com`
 * (its subdomains), `127.0.0.1:8080` (that port only). Only http and https.
 */
export function isAllowed(url: URL, patterns: string[]): boolean {
  if (url.protocol !== "http:" && url.protocol !== "https:") return false;
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return patterns.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith("*.")) return host.endsWith(entry.slice(1)) && host.length > entry.length - 1;
    const e = new URL(`http://${entry}`);
    if (e.hostname !== host) return false;
    // `host:80` spelled out is dropped by URL as the default port: compare the text too
    const wanted = e.port || (/:(\d+)$/.exec(entry)?.[1] ?? "");
    return !wanted || wanted === port;
  });
}

/** Whether the text is a pattern at all: a host name or address, `*.domain`, or either with a port (not a wildcard). */
function shapeProblem(entry: string): string | undefined {
  const wildcard = entry.startsWith("*.");
  const plain = wildcard ? entry.slice(2) : entry;
  if (/[/?#@\s*\\]/.test(plain) || !URL.canParse(`http://${plain}`) || !new URL(`http://${plain}`).hostname) {
    return "is not a host name, *.domain or host:port";
  }
  if (wildcard && new URL(`http://${plain}`).port) return "is a wildcard with a port: give *.domain, which matches any port";
  if (wildcard && isIP(bare(new URL(`http://${plain}`).hostname))) return "is a wildcard over an address: a wildcard needs a domain name";
  return undefined;
}

/** What a name or address that an extension must not reach is (`loopback`, `cloud metadata`, ...); undefined for others. */
function forbiddenKind(hostname: string): string | undefined {
  const host = bare(hostname);
  if (METADATA_NAMES.has(host) || METADATA_ADDRESSES.has(host)) return "cloud metadata";
  if (LOOPBACK_NAMES.has(host) || host.endsWith(".localhost")) return "loopback";
  if (!isIP(host)) return undefined;
  const kind = restrictedKind(host);
  return kind && /loopback|link-local|unspecified/.test(kind) ? kind : undefined;
}

/**
 * What is wrong with an entry of a manifest's network allow list, checked at install and
 * again when the service loads the extension: a bare wildcard or one over a public suffix
 * (`*`, `*.com`, `*.co.uk`, `*.github.io`) would let a module reach hosts anyone can own;
 * loopback, link-local and cloud metadata addresses and names would let it reach this
 * machine. An operator can let an extension reach a loopback or link-local host by listing
 * it in `tools.web.allowHosts`, as for `web_fetch`; metadata services never.
 */
export function allowEntryProblem(entry: string, access: WebAccess): string | undefined {
  if (entry === "*" || entry === "*.") return "is a bare wildcard: it would let the module reach every host";
  const shape = shapeProblem(entry);
  if (shape) return shape;
  if (entry.startsWith("*.")) {
    const base = bare(entry.slice(2));
    const reached =
      base === "localhost" || base.endsWith(".localhost") ? base : [...LOOPBACK_NAMES, ...METADATA_NAMES].find((name) => isAllowed(new URL(`http://${name}`), [entry]));
    if (reached) return `covers ${reached}, which names this machine or its cloud metadata service`;
    if (!getDomain(base, { allowPrivateDomains: true })) {
      return `is a wildcard over the public suffix ${base}, whose names anyone can register: list the domains under it instead`;
    }
    return undefined;
  }
  const host = bare(new URL(`http://${entry}`).hostname);
  const kind = forbiddenKind(host);
  if (!kind) return undefined;
  if (kind === "cloud metadata") return "is a cloud metadata service, which an extension may never reach";
  if (access.allowHosts.some((h) => bare(h) === host)) return undefined;
  return `is ${/^[aeiou]/i.test(kind) ? "an" : "a"} ${kind} address: an extension reaches it only if an operator lists ${host} in tools.web.allowHosts`;
}

/** What is wrong with an entry of a credential's `hosts`: not a pattern, or outside the allow list. */
export function boundHostProblem(entry: string, allow: string[]): string | undefined {
  const shape = shapeProblem(entry);
  if (shape) return shape;
  const covered = entry.startsWith("*.")
    ? allow.some((a) => a.startsWith("*.") && (entry.toLowerCase() === a.toLowerCase() || entry.toLowerCase().endsWith(a.slice(1).toLowerCase())))
    : isAllowed(new URL(`http://${entry}`), allow) || isAllowed(new URL(`https://${entry}`), allow);
  return covered ? undefined : "is not on runtime.network.allow, so the module could never reach it";
}

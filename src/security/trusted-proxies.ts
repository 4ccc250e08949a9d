import ipaddr from "ipaddr.js";

/** Which peers may say, in X-Forwarded-For, whom they forward for. */
export type TrustedProxies = (address: string) => boolean;

/**
 * The addresses and CIDR ranges of FLOWLOG_TRUSTED_PROXIES (issue 16): a load balancer in front of
 * `flowlog serve` is every request's peer, so without it D26's failed-authentication throttle would count
 * all clients as one. Throws, naming the entry, on one that is neither.
 */
export function trustedProxies(entries: readonly string[]): TrustedProxies {
  const ranges = entries.map((entry) => {
    try {
      return entry.includes("/") ? ipaddr.parseCIDR(entry) : ([normalized(entry), -1] as const);
    } catch {
      throw new Error(`${JSON.stringify(entry)} is neither an IP address nor a CIDR range`);
    }
  });
  // Most deployments trust no proxy: then no request's peer needs parsing.
  if (ranges.length === 0) return () => false;
  return (address) => {
    if (!ipaddr.isValid(address)) return false;
    const ip = normalized(address);
    return ranges.some(([range, bits]) => {
      if (range.kind() !== ip.kind()) return false;
      return bits < 0 ? range.toNormalizedString() === ip.toNormalizedString() : ip.match(range, bits);
    });
  };
}

/** An IPv4-mapped IPv6 address (::ffff:127.0.0.1, as dual-stack sockets report IPv4 peers) as IPv4. */
function normalized(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  return ipaddr.process(address);
}

/**
 * The client's address: the peer's, or, when the peer is a trusted proxy, the nearest address in
 * X-Forwarded-For that is not one (each proxy appends the peer it saw; entries left of an untrusted one
 * are the client's own say and worth nothing).
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trusted: TrustedProxies,
): string {
  let address = peer ?? "unknown";
  if (!trusted(address) || forwardedFor === undefined) return address;
  const hops = [forwardedFor]
    .flat()
    .join(",")
    .split(",")
    .map((hop) => hop.trim())
    .filter(Boolean);
  for (const hop of hops.reverse()) {
    if (!ipaddr.isValid(hop)) return address;
    address = normalized(hop).toString();
    if (!trusted(address)) return address;
  }
  return address;
}

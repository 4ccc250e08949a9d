import { type LookupAddress, lookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { Agent, buildConnector, type Dispatcher } from "undici";

/**
 * An outbound request whose target address lies in a network the service must not reach (D22). The message
 * names the host and the address class only: the URL may carry secrets in its path or query (D24).
 */
export class OutboundAddressRefused extends Error {
  readonly code = "outbound_address_refused";

  constructor(
    readonly host: string,
    readonly address: string,
    readonly addressClass: string,
  ) {
    const target = host === address ? address : `${host} (${address})`;
    super(
      `outbound request to ${target} refused: ${addressClass} addresses are not reachable from this service ` +
        "unless FLOWLOG_ALLOW_PRIVATE_NETWORKS=true",
    );
    this.name = "OutboundAddressRefused";
  }
}

const rangeClasses: Readonly<Record<string, string>> = {
  unspecified: "unspecified",
  broadcast: "broadcast",
  multicast: "multicast",
  linkLocal: "link-local",
  loopback: "loopback",
  private: "private",
  uniqueLocal: "private",
  deprecatedSiteLocal: "private",
  carrierGradeNat: "carrier-grade NAT",
};

const globalUnicast6 = ipaddr.parseCIDR("2000::/3");

/**
 * The class of an IP address the service refuses to connect to (D22), or undefined for a public unicast
 * address. Only public unicast passes: every special range ipaddr.js knows (reserved, documentation,
 * benchmarking, Teredo, ...) and every IPv6 address outside 2000::/3 is refused, so a range nobody listed
 * here fails closed.
 */
export function refusedAddressClass(address: string): string | undefined {
  const ip = ipaddr.parse(address);
  const range: string = ip.range();
  if (ip instanceof ipaddr.IPv6 && range !== "loopback" && range !== "unspecified") {
    const carried = carriedIPv4(ip);
    if (carried) return refusedAddressClass(carried.toString());
    if (range === "unicast" && !ip.match(globalUnicast6)) return "reserved";
  }
  if (range === "unicast") return undefined;
  return rangeClasses[range] ?? "reserved";
}

/**
 * The IPv4 address a packet to this IPv6 address is delivered to: IPv4-mapped and IPv4-compatible forms
 * (D22 names them), SIIT-translated, NAT64 (64:ff9b::/96) and 6to4. Judging the carried address keeps
 * ::ffff:127.0.0.1 refused while NAT64 on an IPv6-only host still reaches public IPv4 services.
 */
function carriedIPv4(ip: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const [p0 = 0, p1 = 0, p2 = 0, p3 = 0, p4 = 0, p5 = 0, p6 = 0, p7 = 0] = ip.parts;
  const ipv4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  if (p0 === 0x2002) return ipv4(p1, p2);
  const prefix = [p0, p1, p2, p3, p4, p5].map((part) => part.toString(16)).join(":");
  return carrying96BitPrefixes.has(prefix) ? ipv4(p6, p7) : undefined;
}

const carrying96BitPrefixes = new Set(["0:0:0:0:0:ffff", "0:0:0:0:0:0", "0:0:0:0:ffff:0", "64:ff9b:0:0:0:0"]);

function refusal(host: string, addresses: readonly string[]): OutboundAddressRefused | undefined {
  for (const address of addresses) {
    const addressClass = refusedAddressClass(address);
    if (addressClass) return new OutboundAddressRefused(host, address, addressClass);
  }
  return undefined;
}

/**
 * DNS lookup for the socket itself, so the address judged is the address connected to: no second
 * resolution an attacker's DNS could answer differently (DNS rebinding, D22). A name with any refused
 * address is refused whole: mixing public and private answers is how rebinding attacks are staged.
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    const refused =
      error ??
      refusal(
        hostname,
        addresses.map((entry) => entry.address),
      );
    if (refused) return callback(refused, "", 0);
    const [first] = addresses;
    if (options.all || !first) return callback(null, addresses);
    callback(null, first.address, first.family);
  });
};

/** IP literals never reach the lookup, so they are judged before connecting. */
function guardedConnector(): buildConnector.connector {
  const connect = buildConnector({ lookup: guardedLookup });
  return (options, callback) => {
    const refused = isIP(options.hostname) ? refusal(options.hostname, [options.hostname]) : undefined;
    if (refused) return callback(refused, null);
    connect(options, callback);
  };
}

const dispatchers = new Map<boolean, Dispatcher>();

/**
 * The dispatcher every outbound request goes through (D22): exchange.ts hands it to undici's fetch for
 * every hop, so no caller can leave it out. One per setting so connections are pooled. Every connection it
 * opens is judged, so a redirect hop is judged again.
 */
export function createOutboundDispatcher(options: { allowPrivateNetworks: boolean }): Dispatcher {
  let dispatcher = dispatchers.get(options.allowPrivateNetworks);
  if (!dispatcher) {
    dispatcher = new Agent(options.allowPrivateNetworks ? {} : { connect: guardedConnector() });
    dispatchers.set(options.allowPrivateNetworks, dispatcher);
  }
  return dispatcher;
}

/** The refusal behind a failed fetch ("fetch failed" wraps the connector's error as its cause). */
export function outboundRefusalOf(error: unknown): OutboundAddressRefused | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundAddressRefused) return cause;
  }
  return undefined;
}

// Whom the per-IP vote limit counts: the client address as the runtime can vouch for it, never a header the client
// may have written itself. Each runtime's adapter passes its own function to createArenaVoteApp:
// - the Worker (`workerClientIp`): CF-Connecting-IP, which Cloudflare's edge sets on every request it passes on;
// - Node (`nodeClientIp`): the socket's remote address; only when that is loopback (the nginx recipe proxies from
//   127.0.0.1 with `X-Forwarded-For $proxy_add_x_forwarded_for`) the LAST X-Forwarded-For entry, the address the
//   proxy itself saw. Earlier entries are the client's own words and are never read.
// An IPv6 address counts by its /64, the block one host is usually given, so that a client cannot rotate addresses
// within it; an IPv4-mapped IPv6 address counts as its IPv4 address.
import type { Context } from 'hono';

/** The key of requests whose address is not known (e.g. an embedding that drops Node's socket): one shared bucket. */
export const UNKNOWN_CLIENT = 'unknown';

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const HEXTET = /^[0-9a-f]{1,4}$/;

/** An address without surrounding blanks, URL brackets or IPv6 zone ("fe80::1%eth0"). */
const bare = (text: string): string =>
  text
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '');

/** The eight 16-bit groups of an IPv6 address (zone and brackets removed), or null when it is not one. */
function ipv6Groups(text: string): number[] | null {
  let address = text.toLowerCase();
  // An embedded IPv4 tail (::ffff:192.0.2.1) is two groups.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (tail) {
    if (!IPV4.test(tail[2]!)) return null;
    const [a, b, c, d] = tail[2]!.split('.').map(Number) as [number, number, number, number];
    address = `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = address.split('::');
  if (halves.length > 2) return null;
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]!);
  const rest = halves.length === 2 ? parse(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...rest];
  if (!groups.every((g) => HEXTET.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}

/**
 * The rate-limit key of a client address: an IPv4 address as it is, an IPv6 address as its /64 prefix
 * ("2001:db8:1:2::/64"), an IPv4-mapped IPv6 address as its IPv4 address; null when `text` is no IP address.
 */
export function clientKey(text: string): string | null {
  const address = bare(text);
  if (IPV4.test(address)) return address;
  if (!address.includes(':')) return null;
  const groups = ipv6Groups(address);
  if (!groups) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** 127.0.0.0/8 (IPv4-mapped too) and ::1. */
function isLoopback(text: string): boolean {
  if (clientKey(text)?.startsWith('127.')) return true;
  const groups = ipv6Groups(bare(text));
  return groups !== null && groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1;
}

const socketAddress = (c: Context): string | undefined =>
  (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress;

/**
 * Node (@hono/node-server, whose bindings carry the socket): the peer's address; from a loopback peer (the shipped
 * nginx recipe) the last X-Forwarded-For entry, which nginx's `$proxy_add_x_forwarded_for` appends.
 */
export function nodeClientIp(c: Context): string {
  const remote = socketAddress(c);
  const peer = remote === undefined ? null : clientKey(remote);
  if (remote === undefined || peer === null) return UNKNOWN_CLIENT;
  if (!isLoopback(remote)) return peer;
  const last = c.req.header('x-forwarded-for')?.split(',').at(-1);
  return (last !== undefined && clientKey(last)) || peer;
}

/** Cloudflare Workers: CF-Connecting-IP, set by Cloudflare's edge (a client's own value is replaced). */
export function workerClientIp(c: Context): string {
  const header = c.req.header('cf-connecting-ip');
  return (header !== undefined && clientKey(header)) || UNKNOWN_CLIENT;
}

/**
 * IP addresses and CIDRs read as Kubernetes reads them in its legacy fields
 * (`netutils.ParseIPSloppy`, `netutils.ParseCIDRSloppy`: Go 1.16's parser, which still takes
 * leading zeros in IPv4 octets).
 */
import { isIPv6 } from 'node:net';

/** An address or network: its family, its bits as a number, and (for a network) the prefix length. */
export interface Cidr {
  v6: boolean;
  ip: bigint;
  bits: number;
}

/** Go's `dtoi` of an octet: decimal digits only, below 256 (leading zeros are fine). */
function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    if (!/^[0-9]{1,10}$/.test(p) || Number(p) > 255) return undefined;
    value = (value << 8n) | BigInt(Number(p));
  }
  return value;
}

function parseIPv6(s: string): bigint | undefined {
  if (s.includes('%') || !isIPv6(s)) return undefined;
  const groups = (text: string): number[] | undefined => {
    if (text === '') return [];
    const out: number[] = [];
    for (const g of text.split(':')) {
      if (g.includes('.')) {
        const v4 = parseIPv4(g);
        if (v4 === undefined) return undefined;
        out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
      } else out.push(Number.parseInt(g, 16));
    }
    return out;
  };
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = groups(head ?? '');
  const t = tail === undefined ? [] : groups(tail);
  if (!h || !t) return undefined;
  const all = tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  if (all.length !== 8) return undefined;
  return all.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/** `netutils.ParseIPSloppy`: the address, or undefined when it is not one. */
export function parseIPSloppy(s: string): { v6: boolean; ip: bigint } | undefined {
  const v4 = s.includes(':') ? undefined : parseIPv4(s);
  if (v4 !== undefined) return { v6: false, ip: v4 };
  const v6 = parseIPv6(s);
  return v6 === undefined ? undefined : { v6: true, ip: v6 };
}

/** `netutils.ParseCIDRSloppy`: `address/prefix`, the prefix within the family's width. */
export function parseCidrSloppy(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  if (slash < 0) return undefined;
  const addr = parseIPSloppy(s.slice(0, slash));
  const mask = s.slice(slash + 1);
  if (!addr || !/^[0-9]{1,3}$/.test(mask)) return undefined;
  const bits = Number(mask);
  if (bits > (addr.v6 ? 128 : 32)) return undefined;
  return { ...addr, bits };
}

/** `IPNet.Contains`: whether `ip` (of the same family) is inside `net`. */
export function cidrContains(net: Cidr, ip: { v6: boolean; ip: bigint }): boolean {
  if (net.v6 !== ip.v6) return false;
  const shift = BigInt((net.v6 ? 128 : 32) - net.bits);
  return net.ip >> shift === ip.ip >> shift;
}

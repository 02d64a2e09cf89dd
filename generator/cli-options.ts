// Parsers for command-line values: each turns bad input into one clear sentence.
import { InvalidArgumentError } from 'commander';

export function parseAsOf(value: string): number {
  // Only full ISO 8601 timestamps (date and time, Z or an offset) are accepted: a bare date is ambiguous.
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;
  const ms = Date.parse(value);
  if (!iso.test(value) || Number.isNaN(ms)) {
    throw new InvalidArgumentError(`"${value}" is not an ISO 8601 timestamp such as 2026-11-21T12:00:00Z.`);
  }
  return ms;
}

export function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed) || seed > 0xffffffff) {
    throw new InvalidArgumentError(`"${value}" is not a seed: use a whole number from 0 to 4294967295.`);
  }
  return seed;
}

export function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new InvalidArgumentError(`"${value}" is not a port: use a whole number from 0 to 65535.`);
  }
  return port;
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`"${value}" is not a positive whole number.`);
  }
  return n;
}

export function parseCount(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError(`"${value}" is not a whole number.`);
  }
  return n;
}

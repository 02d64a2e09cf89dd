// One venue call: transport -> status check -> JSON -> zod. Every failure becomes a SourceError with a short reason.
import { z } from 'zod';
import type { Transport } from '../transport.ts';

export class SourceError extends Error {
  override readonly name = 'SourceError';
}

const DETAIL_CHARS = 200;

export async function fetchJson(transport: Transport, url: string, signal?: AbortSignal): Promise<unknown> {
  const response = await transport.fetch({ url }, signal);
  if (response.status < 200 || response.status > 299) {
    const detail = response.body.trim().slice(0, DETAIL_CHARS);
    throw new SourceError(`HTTP ${response.status}${detail ? `: ${detail}` : ''}`);
  }
  try {
    return JSON.parse(response.body) as unknown;
  } catch {
    throw new SourceError('response is not valid JSON');
  }
}

export async function fetchParsed<T>(
  transport: Transport,
  url: string,
  schema: z.ZodType<T>,
  signal?: AbortSignal,
): Promise<T> {
  const result = schema.safeParse(await fetchJson(transport, url, signal));
  if (!result.success) throw new SourceError(`unexpected response shape: ${z.prettifyError(result.error)}`);
  return result.data;
}

/** A decimal number sent as a string (Binance, OKX). */
export const DecimalString = z
  .string()
  .regex(/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/, 'a decimal number as a string');

/** Milliseconds since the epoch, sent as a number or as a string of digits. */
export const MsTime = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]);

export const toNumber = (value: string | number): number => Number(value);

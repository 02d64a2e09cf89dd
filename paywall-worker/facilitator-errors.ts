// Maps a failed call to the facilitator onto the worker's answer. The paid body is never served on any of these.
//   unreachable (connection refused, DNS, reset) -> 503, with Retry-After: the payment service is unavailable
//   slower than the configured timeout           -> 504
//   an answer that is not a valid x402 response  -> 502 (HTTP 5xx, invalid JSON, wrong shape)
import { FacilitatorTimeoutError } from '@x402/core/types';

export interface UpstreamFailure {
  status: 502 | 503 | 504;
  error: 'facilitator_unreachable' | 'facilitator_timeout' | 'facilitator_bad_response';
  message: string;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
]);

/** Failures that happen before a request leaves this machine: the facilitator cannot have acted on it. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']);

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error, depth = 0; current !== undefined && current !== null && depth < 8; depth++) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}

/** False only when the call surely never reached the facilitator (a refused connection, an unknown host). */
export function mayHaveReachedFacilitator(error: unknown): boolean {
  return !causes(error).some((e) => NOT_SENT_CODES.has(String((e as { code?: unknown })?.code)));
}

/** The error and its causes in one line, for the log. */
export function describeError(error: unknown): string {
  return causes(error)
    .map((e) => {
      const code = (e as { code?: unknown })?.code;
      const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      return code ? `${text} [${String(code)}]` : text;
    })
    .join(' <- ');
}

export function classifyFacilitatorError(error: unknown): UpstreamFailure {
  const chain = causes(error);
  if (chain.some((e) => e instanceof FacilitatorTimeoutError || (e as Error)?.name === 'TimeoutError')) {
    return {
      status: 504,
      error: 'facilitator_timeout',
      message: 'The payment facilitator did not answer in time.',
    };
  }
  const unreachable = chain.some(
    (e) =>
      CONNECTION_CODES.has(String((e as { code?: unknown })?.code)) ||
      (e instanceof TypeError && /fetch failed/i.test(e.message)),
  );
  if (unreachable) {
    return {
      status: 503,
      error: 'facilitator_unreachable',
      message: 'The payment facilitator cannot be reached.',
    };
  }
  return {
    status: 502,
    error: 'facilitator_bad_response',
    message: 'The payment facilitator gave an answer that is not a valid x402 response.',
  };
}

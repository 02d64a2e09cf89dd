// A per-host budget: at most N calls in flight and at most R call starts per second, so one run never hammers a
// venue past its published limits. Hosts are the venues' canonical hosts, whatever origin they are routed to.
import pLimit from 'p-limit';
import type { LimitFunction } from 'p-limit';

export interface HostLimits {
  concurrency: number;
  requestsPerSecond: number;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const sleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

interface HostState {
  limit: LimitFunction;
  spacingMs: number;
  nextStart: number;
  /** When the last call actually started. */
  lastStart: number;
}

export class HostBudget {
  private readonly hosts = new Map<string, HostState>();

  constructor(
    private readonly limitsFor: (host: string) => HostLimits,
    private readonly now: () => number = Date.now,
    private readonly wait: Sleep = sleep,
  ) {}

  /**
   * Runs `task` within the host's concurrency, after the host's next free start slot. `whenDue` is called when the
   * call's turn comes, before a slot is taken: throwing there drops the call without spending the host's budget.
   */
  run<T>(host: string, task: () => Promise<T>, signal?: AbortSignal, whenDue?: () => void): Promise<T> {
    const state = this.stateOf(host);
    return state.limit(async () => {
      whenDue?.();
      // Reserve a start slot now, so calls queued together are spaced, not bunched.
      const start = Math.max(this.now(), state.nextStart);
      state.nextStart = start + state.spacingMs;
      const delay = start - this.now();
      if (delay > 0) await this.wait(delay, signal);
      // A timer fires late on a busy machine: the start before this one may have come late, and this one must
      // still keep the spacing from it.
      const behind = state.lastStart + state.spacingMs - this.now();
      if (behind > 0) await this.wait(behind, signal);
      state.lastStart = this.now();
      return task();
    });
  }

  private stateOf(host: string): HostState {
    let state = this.hosts.get(host);
    if (!state) {
      const limits = this.limitsFor(host);
      state = {
        limit: pLimit(Math.max(1, limits.concurrency)),
        spacingMs: limits.requestsPerSecond > 0 ? 1000 / limits.requestsPerSecond : 0,
        nextStart: 0,
        lastStart: -Infinity,
      };
      this.hosts.set(host, state);
    }
    return state;
  }
}

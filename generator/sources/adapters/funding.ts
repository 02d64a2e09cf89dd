// Funding rates are compared per 8 h whatever a venue's settlement interval: a 4 h rate of 0.0001 is 0.0002 per
// 8 h. Shared by the perpetual venues that publish settled rates without stating each one's interval.

const HOUR_MS = 3_600_000;

/**
 * Hours of the funding interval ending at each settlement, read off the spacing of settlements: rounded to whole
 * hours (settlement times jitter by milliseconds) and capped at 8 h (a gap of 16 h is a missing row, not a 16 h
 * interval). Venues move some contracts between 8 h, 4 h and 1 h without saying so in these responses.
 */
export function settlementIntervals(times: readonly number[], fallbackHours = 8): number[] {
  return times.map((time, i) => {
    const gap = i > 0 ? time - (times[i - 1] ?? NaN) : (times[1] ?? NaN) - time;
    const hours = Math.round(gap / HOUR_MS);
    return Number.isFinite(hours) && hours >= 1 ? Math.min(8, hours) : fallbackHours;
  });
}

/** A rate per `intervalHours`, restated per 8 h. */
export const per8h = (rate: number, intervalHours: number): number => (rate * 8) / intervalHours;

export interface SettledRate {
  /** Settlement time (ms). */
  time: number;
  /** The rate of the interval that ended at `time`, per that interval. */
  rate: number;
}

/**
 * Settled rates in any order -> per-8 h rates oldest first, and the interval of the latest settlement; a lone
 * settlement has no spacing to read and counts `fallbackHours`.
 */
export function settledHistory(
  rows: readonly SettledRate[],
  fallbackHours = 8,
): {
  history8h: number[];
  latestIntervalHours: number | undefined;
} {
  const settled = [...rows].sort((a, b) => a.time - b.time);
  const intervals = settlementIntervals(
    settled.map((row) => row.time),
    fallbackHours,
  );
  return {
    history8h: settled.map((row, i) => per8h(row.rate, intervals[i] ?? 8)),
    latestIntervalHours: intervals.at(-1),
  };
}

// Funding rates are compared per 8 h whatever a venue's settlement interval: a 4 h rate of 0.0001 is 0.0002 per
// 8 h. Shared by the perpetual venues that publish settled rates without stating each one's interval.

const HOUR_MS = 3_600_000;

/**
 * Hours of the funding interval ending at each settlement, read off the spacing of settlements: rounded to whole
 * hours (settlement times jitter by milliseconds) and capped at 8 h (a gap of 16 h is a missing row, not a 16 h
 * interval). A gap that is a whole multiple of the one interval both its neighbours share is missing rows too (the
 * hourly 20:00, 22:00, 23:00 lacks 21:00): the interval stays the neighbours', else one hourly rate would read as a
 * 2 h one, halved per 8 h. Venues move some contracts between 8 h, 4 h and 1 h without saying so in these responses;
 * a change of schedule has different intervals either side of it, so it is not mistaken for a missing row.
 */
export function settlementIntervals(times: readonly number[], fallbackHours = 8): number[] {
  // gaps[i]: whole hours between settlement i - 1 and i (NaN for the first).
  const gaps = times.map((time, i) => (i > 0 ? Math.round((time - (times[i - 1] ?? NaN)) / HOUR_MS) : NaN));
  return times.map((_, i) => {
    const hours = i > 0 ? withoutMissingRows(gaps[i], gaps[i - 1], gaps[i + 1]) : gaps[1];
    return hours !== undefined && Number.isFinite(hours) && hours >= 1 ? Math.min(8, hours) : fallbackHours;
  });
}

/** A gap, or the interval its neighbours share when the gap is a whole multiple of it (rows missing in between). */
function withoutMissingRows(
  gap: number | undefined,
  before: number | undefined,
  after: number | undefined,
): number | undefined {
  if (gap === undefined || before === undefined || after === undefined || before !== after) return gap;
  const shared = before;
  return Number.isFinite(shared) && shared >= 1 && gap > shared && gap % shared === 0 ? shared : gap;
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
 * Settled rates in any order -> per-8 h rates oldest first with their settlement times, and the interval of the
 * latest settlement; a lone settlement has no spacing to read and counts `fallbackHours`.
 */
export function settledHistory(
  rows: readonly SettledRate[],
  fallbackHours = 8,
): {
  history8h: number[];
  historyTimes: number[];
  latestIntervalHours: number | undefined;
} {
  const settled = [...rows].sort((a, b) => a.time - b.time);
  const intervals = settlementIntervals(
    settled.map((row) => row.time),
    fallbackHours,
  );
  return {
    history8h: settled.map((row, i) => per8h(row.rate, intervals[i] ?? 8)),
    historyTimes: settled.map((row) => row.time),
    latestIntervalHours: intervals.at(-1),
  };
}

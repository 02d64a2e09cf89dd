// The run's clock, passed into every engine so that engines never read the system time.
export interface RunClock {
  /** Market time the run describes (ms). */
  asOf: number;
  /** When the files are produced (ms); equals asOf for simulated and replayed runs. */
  generatedAt: number;
  /** When the next scheduled run should replace the files (ms). */
  nextUpdateDue: number;
}

export const iso = (ms: number): string => new Date(ms).toISOString();
export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

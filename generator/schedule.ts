// Runs a job on a cron expression with node-cron: never two at once, and stopping waits for the run in flight. The
// fields are read in UTC, and a watchdog re-arms the schedule when the wall clock steps (NTP, a restored snapshot,
// a suspended machine), which node-cron's monotonic timers would otherwise sleep through.
import cron from 'node-cron';
import type { Logger, ScheduledTask } from 'node-cron';
import { MAX_CADENCE_SECONDS } from './cli-options.ts';

export { DEFAULT_CRON } from './defaults.ts';

/**
 * Everything emi publishes is UTC (a run describes a UTC minute, a history day is a UTC day), so a schedule's cron
 * fields are too, whatever the host's zone: with the host's zone a DST night skips or doubles an hour of runs.
 */
export const SCHEDULE_TIME_ZONE = 'Etc/UTC';

/**
 * node-cron's `timezone` option covers its matcher only: its heartbeat reads the clock with `setMilliseconds(0)`, a
 * local-time setter that maps the hour repeated when clocks go back to its first occurrence, an hour early, so the
 * default schedule fell silent for that hour (05:59Z, then 07:00Z in New York). The process that schedules is
 * therefore put in UTC itself, whatever TZ it was started with; nothing in emi reads local time.
 */
function pinProcessTimeZoneToUtc(): void {
  if (process.env.TZ !== 'UTC') process.env.TZ = 'UTC'; // Node applies it to Date (and Intl's default) at once
  const offsets = [0, 6].map((month) => new Date(Date.UTC(2026, month, 1)).getTimezoneOffset());
  if (offsets.some((offset) => offset !== 0)) {
    throw new Error('the schedule could not put this process in UTC: start emi with TZ=UTC');
  }
}

export interface Schedule {
  /** Stops firing, then resolves once the run in flight (if any) has finished. */
  stop(): Promise<void>;
}

/** The two clocks the watchdog compares: the wall clock, which steps, and the monotonic one node's timers follow. */
interface ScheduleClock {
  wallNow(): number;
  monotonicNow(): number;
}

const systemClock: ScheduleClock = { wallNow: () => Date.now(), monotonicNow: () => performance.now() };

const SECOND_MS = 1_000;
const MINUTE_MS = 60 * SECOND_MS;
const DAY_MS = 24 * 60 * MINUTE_MS;
/** How often the watchdog compares the clocks: a stepped clock is noticed, and the schedule re-armed, this soon. */
const CLOCK_WATCH_INTERVAL_MS = 10 * SECOND_MS;
/** A divergence larger than this is a step; NTP's slewing and timer latency stay far below it. */
const CLOCK_STEP_TOLERANCE_MS = 5 * SECOND_MS;
/** Counting missed ticks stops here (a seconds cron across a month-long suspension): the line says "more than". */
const MISSED_COUNT_LIMIT = 1_000_000;

export function assertCronExpression(expression: string): void {
  if (!cron.validate(expression)) throw new Error(`"${expression}" is not a valid cron expression.`);
}

/**
 * node-cron's own messages as plain lines: its default logger adds a timestamp, its PID and ANSI colours. Its two
 * warnings are said by the schedule instead (a tick skipped while a run is in flight: `onSkip`; ticks missed: the
 * `execution:missed` listener), its errors keep their text.
 */
const plainLogger: Logger = {
  info: () => {},
  debug: () => {},
  warn: () => {},
  error: (message, error) => {
    const text = message instanceof Error ? message.message : message;
    console.error(`emi: node-cron: ${text}${error ? `: ${error.message}` : ''}`);
  },
};

/** A cron expression's matcher in UTC, with its parsed fields (to skip the minutes that cannot match). */
interface UtcCron {
  match(date: Date): boolean;
  seconds: number[];
  minutes: Set<number>;
  hours: Set<number>;
}

function utcCron(expression: string, task: Pick<ScheduledTask, 'match'>): UtcCron {
  const fields = cron.parse(expression);
  return {
    match: (date) => task.match(date),
    seconds: [...fields.second].sort((a, b) => a - b),
    minutes: new Set(fields.minute),
    hours: new Set(fields.hour),
  };
}

/** The times (epoch ms) the expression fires in the window (from, to], earliest first. */
function* fireTimes(expression: UtcCron, from: number, to: number): Generator<number> {
  for (let minute = Math.floor(from / MINUTE_MS) * MINUTE_MS; minute <= to; minute += MINUTE_MS) {
    const at = new Date(minute);
    if (!expression.minutes.has(at.getUTCMinutes()) || !expression.hours.has(at.getUTCHours())) continue;
    // The day, month and weekday fields do not depend on the second: one match per minute decides them.
    if (!expression.match(new Date(minute + expression.seconds[0]! * SECOND_MS))) continue;
    for (const second of expression.seconds) {
      const time = minute + second * SECOND_MS;
      if (time > from && time <= to) yield time;
    }
  }
}

function countFireTimes(expression: UtcCron, from: number, to: number): { count: number; capped: boolean } {
  let count = 0;
  for (const _time of fireTimes(expression, from, to)) {
    if (++count >= MISSED_COUNT_LIMIT) return { count, capped: true };
  }
  return { count, capped: false };
}

/** The shortest and longest gaps (ms) between runs over the next two weeks; null if it fires less often. */
function cronIntervals(expression: string, from = Date.now()): { shortest: number; longest: number } | null {
  assertCronExpression(expression);
  const task = cron.createTask(expression, () => {}, { timezone: SCHEDULE_TIME_ZONE, logger: plainLogger });
  try {
    const times: number[] = [];
    // Fifteen days: a weekly cron shows its interval; 64 runs are enough for any faster one.
    for (const time of fireTimes(utcCron(expression, task), from, from + 15 * DAY_MS)) {
      if (times.push(time) >= 64) break;
    }
    const gaps = times.slice(1).map((time, i) => time - times[i]!);
    return gaps.length ? { shortest: Math.min(...gaps), longest: Math.max(...gaps) } : null;
  } finally {
    void task.destroy();
  }
}

/**
 * A cron slower than the cadence publishes a next_update_due that passes long before the next run: the files read
 * late, then stale, and the paywall refuses to sell them for most of each interval. One line naming both, or null.
 */
export function cadenceWarning(expression: string, cadenceSeconds: number, from = Date.now()): string | null {
  const intervals = cronIntervals(expression, from);
  const cadenceMs = cadenceSeconds * SECOND_MS;
  if (intervals && intervals.longest <= cadenceMs) return null;
  const runs = !intervals
    ? 'runs less often than weekly'
    : intervals.shortest === intervals.longest
      ? `runs every ${intervals.longest / SECOND_MS} s`
      : `runs ${intervals.shortest / SECOND_MS} to ${intervals.longest / SECOND_MS} s apart`;
  const remedy =
    intervals && intervals.longest <= MAX_CADENCE_SECONDS * SECOND_MS
      ? `give --cadence ${intervals.longest / SECOND_MS}`
      : `--cadence is at most ${MAX_CADENCE_SECONDS} (a day): schedule runs at most a day apart`;
  return (
    `--cron "${expression}" ${runs} (UTC) but --cadence is ${cadenceSeconds}: next_update_due passes before the ` +
    `next run, so the files read late, then stale, and the paywall refuses sales meanwhile; ${remedy}`
  );
}

/** "1 h 5 min", "42 s": a clock step or a gap as an operator reads it. */
function describeDuration(ms: number): string {
  const total = Math.round(Math.abs(ms) / SECOND_MS);
  const [days, hours, minutes, seconds] = [
    Math.floor(total / 86_400),
    Math.floor((total % 86_400) / 3_600),
    Math.floor((total % 3_600) / 60),
    total % 60,
  ];
  const parts = [
    days && `${days} d`,
    hours && `${hours} h`,
    minutes && `${minutes} min`,
    (seconds || total === 0) && `${seconds} s`,
  ];
  return parts.filter(Boolean).join(' ');
}

const iso = (ms: number) => new Date(ms).toISOString();

/** One line for ticks node-cron reports missed although the clock kept time: the process was busy. */
function missedTicksLine(ticks: Date[]): string {
  if (ticks.length === 1)
    return `the tick of ${ticks[0]!.toISOString()} was missed (this process was busy): the next one runs`;
  const [first, last] = [ticks[0]!.toISOString(), ticks[ticks.length - 1]!.toISOString()];
  return `${ticks.length} ticks from ${first} to ${last} were missed (this process was busy): the next one runs`;
}

/**
 * Compares the wall clock with the monotonic one. node-cron arms a monotonic timer for "next run minus now": after
 * the wall clock steps back, that timer sleeps for the whole step, even once the clock is corrected; after a jump
 * ahead (a suspended laptop), it fires late and reports every tick in between as missed. Either way the schedule is
 * re-armed from the new time and the step is said in one line.
 */
function createClockWatch(clock: ScheduleClock, expression: UtcCron, rearm: () => void) {
  let wall = clock.wallNow();
  let monotonic = clock.monotonicNow();
  /**
   * Returns whether the clock stepped (and the step was said). `missedTicks`: how many node-cron has just reported
   * (its count, when it noticed the jump first), else they are counted here.
   */
  return function checkClock(missedTicks?: number): boolean {
    const [wallNow, monotonicNow] = [clock.wallNow(), clock.monotonicNow()];
    const expectedWall = wall + (monotonicNow - monotonic);
    const step = wallNow - expectedWall;
    [wall, monotonic] = [wallNow, monotonicNow];
    if (Math.abs(step) <= CLOCK_STEP_TOLERANCE_MS) return false;
    if (step < 0) {
      console.log(
        `the clock stepped back ${describeDuration(step)} (to ${iso(wallNow)}): the schedule is re-armed from the new time`,
      );
    } else {
      const { count, capped } =
        missedTicks === undefined
          ? countFireTimes(expression, expectedWall, wallNow)
          : { count: missedTicks, capped: false };
      const ticks = `${capped ? 'more than ' : ''}${count} tick${count === 1 ? '' : 's'}`;
      console.log(
        `the clock jumped ahead ${describeDuration(step)} (from ${iso(expectedWall)} to ${iso(wallNow)}: a suspended ` +
          `machine or a clock step): ${ticks} missed, the schedule is re-armed and the next one runs`,
      );
    }
    rearm();
    return true;
  };
}

export function startSchedule(
  expression: string,
  job: () => Promise<void>,
  onSkip: () => void = () => {},
): Schedule {
  assertCronExpression(expression);
  pinProcessTimeZoneToUtc();
  let inFlight: Promise<void> | null = null;
  const task = cron.schedule(
    expression,
    async () => {
      if (inFlight) return onSkip(); // belt and braces beside noOverlap: a slow run is never doubled
      inFlight = job().finally(() => {
        inFlight = null;
      });
      await inFlight;
    },
    { noOverlap: true, name: 'emi-generate', logger: plainLogger, timezone: SCHEDULE_TIME_ZONE },
  );
  task.on('execution:overlap', () => onSkip());
  // Stopping and starting makes node-cron plan its next tick from the clock's current time.
  const rearm = () => {
    void task.stop();
    void task.start();
  };
  const checkClock = createClockWatch(systemClock, utcCron(expression, task), rearm);
  const watch = setInterval(() => checkClock(), CLOCK_WATCH_INTERVAL_MS);
  watch.unref(); // the schedule's own timer keeps the process alive, not its watchdog
  // node-cron reports each missed tick in turn, all in one heartbeat: they are said in one line, by the watchdog
  // when the clock jumped (it names the jump), else as ticks the busy process missed.
  let missed: Date[] = [];
  task.on('execution:missed', ({ date }) => {
    if (missed.push(date) > 1) return;
    queueMicrotask(() => {
      const ticks = missed;
      missed = [];
      if (!checkClock(ticks.length)) console.log(missedTicksLine(ticks));
    });
  });
  return {
    async stop() {
      clearInterval(watch);
      await task.stop();
      await task.destroy();
      await inFlight;
    },
  };
}

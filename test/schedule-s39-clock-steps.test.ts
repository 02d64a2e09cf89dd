// The schedule when the wall clock steps: node-cron driven in-process with fake timers, where setting the system
// time moves Date alone and the timers keep their monotonic delays, as after an NTP step, a restored VM snapshot or
// a suspended laptop.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockInstance } from 'vitest';
import { startSchedule } from '../generator/schedule.ts';
import type { Schedule } from '../generator/schedule.ts';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

let log: MockInstance<typeof console.log>;
let schedule: Schedule | undefined;
let ran: string[];

beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
    now: new Date('2026-06-10T12:00:30Z'),
  });
  log = vi.spyOn(console, 'log').mockImplementation(() => {});
  ran = [];
  schedule = startSchedule('* * * * *', async () => {
    ran.push(new Date().toISOString());
  });
});
afterEach(async () => {
  await schedule?.stop();
  log.mockRestore();
  vi.useRealTimers();
});

/** Steps the wall clock by `ms` without moving the timers (the monotonic clock). */
const stepWallClock = (ms: number) => vi.setSystemTime(Date.now() + ms);
const lines = () => log.mock.calls.map((call) => String(call[0]));

describe('emi schedule when the wall clock steps', () => {
  it('after a step back, the schedule is re-armed within a minute and says so, and runs again', async () => {
    await vi.advanceTimersByTimeAsync(45 * SECOND); // 12:01:15: the 12:01 run happened
    expect(ran).toEqual(['2026-06-10T12:01:00.000Z']);
    stepWallClock(-HOUR); // to 11:01:15
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    // Before the fix, node-cron's timer slept for the whole hour: nothing ran.
    expect(ran.slice(1)).toEqual(['2026-06-10T11:02:00.000Z', '2026-06-10T11:03:00.000Z']);
    expect(lines()).toEqual([
      expect.stringMatching(/^the clock stepped back 1 h \(to 2026-06-10T11:01:2\d\.\d{3}Z\): .*re-armed/),
    ]);
  });

  it('a step back corrected after node-cron re-armed for it: the runs follow the corrected clock', async () => {
    await vi.advanceTimersByTimeAsync(45 * SECOND); // 12:01:15
    stepWallClock(-3 * HOUR);
    await vi.advanceTimersByTimeAsync(90 * SECOND); // node-cron's beat came and re-armed for 3 h
    stepWallClock(3 * HOUR); // NTP puts it right: 12:02:45
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    expect(ran).toContain('2026-06-10T12:03:00.000Z');
    expect(ran).toContain('2026-06-10T12:04:00.000Z');
  });

  it('after a suspended machine wakes 8 h later: one line naming the jump and the 480 ticks missed', async () => {
    await vi.advanceTimersByTimeAsync(5 * SECOND); // 12:00:35, the watchdog notices first
    stepWallClock(8 * HOUR);
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    expect(lines()).toEqual([
      expect.stringMatching(/^the clock jumped ahead 8 h \(from .*\): 480 ticks missed, /),
    ]);
    expect(ran).toEqual(['2026-06-10T20:01:00.000Z', '2026-06-10T20:02:00.000Z']);
  });

  it('when node-cron notices the jump first, still one line, with its own count', async () => {
    await vi.advanceTimersByTimeAsync(25 * SECOND); // 12:00:55: node-cron's next beat (12:01) comes first
    stepWallClock(8 * HOUR);
    await vi.advanceTimersByTimeAsync(2 * MINUTE);
    expect(lines()).toEqual([
      expect.stringMatching(/^the clock jumped ahead 8 h \(from .*\): 480 ticks missed, /),
    ]);
    expect(ran[0]).toBe('2026-06-10T20:01:00.000Z');
  });
});

// The schedule reads its cron fields in UTC whatever the host's zone: node-cron driven in-process with fake timers
// (its setTimeout, Date and performance.now), on a host in New York, a zone with daylight saving time.
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cadenceWarning, startSchedule } from '../generator/schedule.ts';

// Before node-cron formats a date: it caches its formatter, made in the zone of the moment.
const hostZone = vi.hoisted(() => {
  const before = process.env.TZ;
  process.env.TZ = 'America/New_York';
  return before;
});

afterAll(() => {
  if (hostZone === undefined) delete process.env.TZ;
  else process.env.TZ = hostZone;
});

const MINUTE = 60_000;

beforeEach(() => {
  vi.useFakeTimers({
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
  });
});
afterEach(() => {
  vi.useRealTimers();
});

/** The times (ISO) a schedule of `expression` runs its job, started at `start`, over `spanMs` of clock time. */
async function runTimes(expression: string, start: string, spanMs: number): Promise<string[]> {
  vi.setSystemTime(new Date(start));
  const ran: string[] = [];
  const schedule = startSchedule(expression, async () => {
    ran.push(new Date().toISOString());
  });
  await vi.advanceTimersByTimeAsync(spanMs);
  await schedule.stop();
  return ran;
}

describe('emi schedule on a host in a daylight-saving zone (TZ=America/New_York)', () => {
  it('the night clocks go back: the default schedule runs every minute, no hour skipped', async () => {
    // 2026-11-01 06:00Z is when New York's 01:59 EDT becomes 01:00 EST.
    const ran = await runTimes('* * * * *', '2026-11-01T05:57:30Z', 5 * MINUTE);
    expect(ran).toEqual([
      '2026-11-01T05:58:00.000Z',
      '2026-11-01T05:59:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T06:01:00.000Z',
      '2026-11-01T06:02:00.000Z',
    ]);
  });

  it('"0 0 * * *" runs at midnight UTC, not at the host\'s midnight', async () => {
    const ran = await runTimes('0 0 * * *', '2026-11-01T22:00:00Z', 8 * 60 * MINUTE);
    expect(ran).toEqual(['2026-11-02T00:00:00.000Z']);
  });

  it('a cron slower than the cadence is measured in UTC too: "0 */6 * * *" runs every 6 h', () => {
    // Across the night the clocks go back, in the host's zone, one of its gaps would be 7 h.
    const warning = cadenceWarning('0 */6 * * *', 60, Date.parse('2026-10-31T12:00:00Z'));
    expect(warning).toMatch(/runs every 21600 s \(UTC\) but --cadence is 60: .*give --cadence 21600$/);
  });
});

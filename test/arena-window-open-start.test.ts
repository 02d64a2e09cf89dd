// The 30-day window is (as_of - 30 days, as_of]: a round that ended exactly 30 days before the run is out of it.
// The audit: both ends were in, so a run exactly on the hour counted 721 hourly rounds (resolved_rounds 717 -> 718
// -> 717 at 18:10, 19:00:00, 20:01).
import { afterEach, describe, expect, it } from 'vitest';
import type { DataMode } from '../schemas/common.ts';
import { WINDOW_DAYS } from '../generator/engines/arena/metrics.ts';
import { roundByIndex, ROUND_MS } from '../generator/engines/arena/rounds.ts';
import { brainCallFor } from '../generator/state/repo.ts';
import { recordRoundCall, settleRound } from '../generator/state/settle.ts';
import type { ArenaStore } from '../generator/state/store.ts';
import { readArenaView } from '../generator/state/view.ts';
import { tempStore } from './arena-fixtures.ts';

const open: ArenaStore[] = [];
afterEach(() => {
  for (const s of open.splice(0)) if (s.db.open) s.close();
});

/** On the hour: a round ends at this very time, and another exactly WINDOW_DAYS before it. */
const AS_OF = Date.UTC(2026, 10, 26, 19);
const HOURS = WINDOW_DAYS * 24;

type Boundary = 'resolved' | 'other-mode' | 'voided';

/**
 * A simulated store with the HOURS + 1 hourly rounds that ended from AS_OF - WINDOW_DAYS to AS_OF, each resolved
 * at its end; the first one, ended exactly WINDOW_DAYS before AS_OF, as `boundary` says.
 */
function storeOfWindow(boundary: Boundary): ArenaStore {
  const s = tempStore();
  open.push(s);
  const last = AS_OF / ROUND_MS - 1;
  s.db.transaction(() => {
    for (let index = last - HOURS; index <= last; index++) {
      const round = roundByIndex(index);
      const first = index === last - HOURS;
      const mode: DataMode = first && boundary === 'other-mode' ? 'live' : 'simulated';
      const call = { asset: round.asset, bias: 'bullish' as const, confidence: 60, price: 100 };
      recordRoundCall(s.db, round, call, 100, round.start, false, mode);
      settleRound(s.db, {
        round,
        call: brainCallFor(s.db, round.id)!,
        endPrice: first && boundary === 'voided' ? null : 101,
        resolvedAt: round.end,
        replayed: false,
      });
    }
  })();
  expect(roundByIndex(last - HOURS).end).toBe(AS_OF - WINDOW_DAYS * 86_400_000);
  return s;
}

const viewAt = (s: ArenaStore, asOf: number) =>
  readArenaView(s, {
    mode: 'simulated',
    clock: { asOf, generatedAt: asOf, nextUpdateDue: asOf + 60_000 },
    brainCalls: [],
    prices: {},
  });

describe(`the ${WINDOW_DAYS}-day window`, () => {
  it(`holds ${HOURS} hourly rounds at a run exactly on the hour, not ${HOURS + 1}`, () => {
    const s = storeOfWindow('resolved');
    expect(viewAt(s, AS_OF).window).toHaveLength(HOURS);
    // A second later the boundary round is further out still; a second earlier the newest round has not ended.
    expect(viewAt(s, AS_OF + 1000).window).toHaveLength(HOURS);
    expect(viewAt(s, AS_OF - 1000).window).toHaveLength(HOURS);
  });

  it('leaves out a round of another mode that ended exactly at its start', () => {
    const s = storeOfWindow('other-mode');
    const view = viewAt(s, AS_OF);
    expect(view.leftOut.rounds).toBe(0);
    expect(view.window).toHaveLength(HOURS);
    expect(viewAt(s, AS_OF - 1000).leftOut.rounds).toBe(1);
  });

  it('counts no voided round that ended exactly at its start', () => {
    const s = storeOfWindow('voided');
    expect(viewAt(s, AS_OF).voidedInWindow).toBe(0);
    expect(viewAt(s, AS_OF - 1000).voidedInWindow).toBe(1);
  });
});

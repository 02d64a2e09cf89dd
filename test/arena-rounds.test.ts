import { describe, expect, it } from 'vitest';
import { formatTimer, roundAt, roundByIndex, roundInfo } from '../generator/engines/arena/rounds.ts';
import { RoundInfo } from '../schemas/arena.ts';
import { TRACKED_ASSETS } from '../schemas/common.ts';
import { HOUR, T0 } from './arena-fixtures.ts';

describe('round schedule', () => {
  it('aligns 60-minute rounds to the UTC hour and names them by asset and hour', () => {
    const r = roundAt(T0 + 17 * 60_000);
    expect(r.start).toBe(T0);
    expect(r.end).toBe(T0 + HOUR);
    expect(r.index).toBe(T0 / HOUR);
    expect(r.asset).toBe(TRACKED_ASSETS[(T0 / HOUR) % 7]);
    expect(r.id).toBe(`${r.asset}-20250101T10Z`);
  });

  it('rotates through the seven assets in spec order', () => {
    const first = roundAt(T0).index;
    const seen = Array.from({ length: 14 }, (_, k) => roundByIndex(first + k).asset);
    const offset = TRACKED_ASSETS.indexOf(seen[0]!);
    seen.forEach((asset, k) => expect(asset).toBe(TRACKED_ASSETS[(offset + k) % 7]));
  });

  it('puts the start in the round and the end in the next one', () => {
    expect(roundAt(T0).start).toBe(T0);
    expect(roundAt(T0 + HOUR - 1).start).toBe(T0);
    expect(roundAt(T0 + HOUR).start).toBe(T0 + HOUR);
    expect(roundAt(T0 - 1).end).toBe(T0);
  });

  it('counts whole seconds left, rounded up, and formats them as MM:SS', () => {
    const r = roundAt(T0);
    expect(roundInfo(r, T0)).toMatchObject({ seconds_left: 3600, timer: '60:00' });
    expect(roundInfo(r, T0 + 17 * 60_000 + 53_200)).toMatchObject({ seconds_left: 2527, timer: '42:07' });
    expect(roundInfo(r, T0 + HOUR - 1)).toMatchObject({ seconds_left: 1, timer: '00:01' });
    expect(roundInfo(r, T0 + HOUR)).toMatchObject({ seconds_left: 0, timer: '00:00' });
    expect(formatTimer(9)).toBe('00:09');
    const info = roundInfo(r, T0 + 1);
    expect(RoundInfo.parse(info)).toEqual(info);
    expect(info.start).toBe('2025-01-01T10:00:00.000Z');
    expect(info.end).toBe('2025-01-01T11:00:00.000Z');
  });
});
